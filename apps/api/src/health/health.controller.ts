import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators.js';
import { Answers } from '../response.doc.js';
import type { PublicReadiness } from '#common';
import { HealthService } from './health.service.js';
import { LivenessView, ReadinessView } from './health.view.js';

@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(@Inject(HealthService) private readonly health: HealthService) {}

  @Get('healthz')
  @ApiOperation({
    summary: 'Check that the process is alive',
    description: 'Liveness: 200 `{ "status": "ok" }` whenever the process answers; no dependency is consulted. No token needed.',
  })
  @Answers(LivenessView)
  healthz(): LivenessView {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({
    summary: 'Check that Postgres and Redis answer',
    description:
      'Readiness: 200 when Postgres and Redis both answer within QM_READY_TIMEOUT_MS, 503 otherwise; the scheduler leader is reported, not required. ' +
      'No token needed; when QM_METRICS_TOKEN is set, only its bearer gets the detail (timings, errors, leader), other callers only `ok` per dependency.',
  })
  @Answers(ReadinessView, 200, 503)
  async readyz(@Res({ passthrough: true }) reply: FastifyReply, @Headers('authorization') authorization: string | undefined): Promise<ReadinessView | PublicReadiness> {
    const { ready, view } = await this.health.readiness(authorization);
    void reply.status(ready ? 200 : 503);
    return view;
  }
}
