import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { checkReadiness, Config, opsAccessAllowed, publicReadiness, redactUrl, type PublicReadiness } from '#common';
import { Database, SchedulerStateRepository } from '#db';
import { REDIS } from '../infra/tokens.js';
import { withTimeout } from '../infra/redis.js';
import type { ReadinessView } from './health.view.js';

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
    const r = await checkReadiness({
      postgres: { probe: () => this.database.ping(timeout), what: `postgres at ${redactUrl(this.config.databaseUrl)}` },
      redis: { probe: () => withTimeout(this.redis.ping(), timeout, 'redis'), what: `redis at ${redactUrl(this.config.redisUrl)}` },
    });
    // With QM_METRICS_TOKEN set, the detail (error text, leader host:pid) is for its bearer only.
    if (!opsAccessAllowed(authorization, this.config.metricsTokenHash)) return { ready: r.ready, view: publicReadiness(r) };
    let leader: ReadinessView['leader'] = null;
    if (r.checks.postgres.ok) {
      const status = await withTimeout(this.scheduler.status(), timeout, 'postgres').catch(() => null);
      leader = status?.leader ? { holder: status.leader.holder, live: status.leader.live } : null;
    }
    return { ready: r.ready, view: { status: r.status, checks: r.checks, leader } };
  }
}
