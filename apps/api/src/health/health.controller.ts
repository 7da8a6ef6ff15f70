import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
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

  /** Liveness: the process answers. No dependency is consulted. */
  @Get('healthz')
  @Answers(LivenessView)
  healthz(): LivenessView {
    return { status: 'ok' };
  }

  /** Readiness: Postgres and Redis answer within QM_READY_TIMEOUT_MS; the leader is reported, not required. */
  @Get('readyz')
  @Answers(ReadinessView, 200, 503)
  async readyz(@Res({ passthrough: true }) reply: FastifyReply, @Headers('authorization') authorization: string | undefined): Promise<ReadinessView | PublicReadiness> {
    const { ready, view } = await this.health.readiness(authorization);
    void reply.status(ready ? 200 : 503);
    return view;
  }
}
