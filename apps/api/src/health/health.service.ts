import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { bearerMatches, Config, redactUrl } from '#common';
import { Database, SchedulerStateRepository } from '#db';
import { REDIS } from '../infra/tokens.js';
import { withTimeout } from '../infra/redis.js';
import type { CheckView, ReadinessView } from './health.view.js';

/** What /readyz shows a caller without QM_METRICS_TOKEN when it is set. */
export interface PublicReadiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: { ok: boolean }; redis: { ok: boolean } };
}

/** Readiness: Postgres and Redis answer within QM_READY_TIMEOUT_MS; the leader is reported, not required. */
@Injectable()
export class HealthService {
  constructor(
    @Inject(Config) private readonly config: Config,
    @Inject(Database) private readonly database: Database,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(SchedulerStateRepository) private readonly scheduler: SchedulerStateRepository,
  ) {}

  /** `ready` decides the status code; `view` is the detail, or only ok per dependency for a caller without the metrics token when one is set. */
  async readiness(authorization: string | undefined): Promise<{ ready: boolean; view: ReadinessView | PublicReadiness }> {
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
    const status = ready ? 'ready' : 'unavailable';
    const hash = this.config.metricsTokenHash;
    if (hash !== null && !bearerMatches(authorization, hash)) {
      // With QM_METRICS_TOKEN set, the detail (error text, leader host:pid) is for its bearer only.
      return { ready, view: { status, checks: { postgres: { ok: postgres.ok }, redis: { ok: redis.ok } } } };
    }
    return { ready, view: { status, checks: { postgres, redis }, leader } };
  }
}

async function check(probe: () => Promise<unknown>, what: string): Promise<CheckView> {
  const started = performance.now();
  try {
    await probe();
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, ms: Math.round(performance.now() - started), error: `${what}: ${message}` };
  }
}
