import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { bearerMatches, Config, redactUrl } from '#common';
import { Database, SchedulerStateRepository } from '#db';
import { Public } from '../auth/auth.decorators.js';
import { REDIS } from '../infra/tokens.js';
import { withTimeout } from '../infra/redis.js';
import { Answers } from '../response.doc.js';
import { LivenessView, ReadinessView } from './health.view.js';

/** What /readyz shows a caller without QM_METRICS_TOKEN when it is set. */
interface PublicReadiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: { ok: boolean }; redis: { ok: boolean } };
}

interface Check {
  ok: boolean;
  ms: number;
  error?: string;
}

@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(Config) private readonly config: Config,
    @Inject(Database) private readonly database: Database,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(SchedulerStateRepository) private readonly scheduler: SchedulerStateRepository,
  ) {}

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
    const timeout = this.config.readyTimeoutMs;
    const [postgres, redis] = await Promise.all([
      check(() => this.database.ping(timeout), `postgres at ${redactUrl(this.config.databaseUrl)}`),
      check(() => withTimeout(this.redis.ping(), timeout, 'redis'), `redis at ${redactUrl(this.config.redisUrl)}`),
    ]);
    let leader: ReadinessView['leader'] = null;
    if (postgres.ok) {
      const status = await withTimeout(this.scheduler.status(), timeout, 'postgres').catch(() => null);
      leader = status?.leader ? { holder: status.leader.holder, live: status.leader.live } : null;
    }
    const ready = postgres.ok && redis.ok;
    void reply.status(ready ? 200 : 503);
    const hash = this.config.metricsTokenHash;
    if (hash !== null && !bearerMatches(authorization, hash)) {
      // With QM_METRICS_TOKEN set, the detail (error text, leader host:pid) is for its bearer only.
      return { status: ready ? 'ready' : 'unavailable', checks: { postgres: { ok: postgres.ok }, redis: { ok: redis.ok } } };
    }
    return { status: ready ? 'ready' : 'unavailable', checks: { postgres, redis }, leader };
  }
}

async function check(probe: () => Promise<unknown>, what: string): Promise<Check> {
  const started = performance.now();
  try {
    await probe();
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, ms: Math.round(performance.now() - started), error: `${what}: ${message}` };
  }
}
