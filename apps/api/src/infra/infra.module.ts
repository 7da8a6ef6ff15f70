import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Config } from '#common';
import {
  CohortRepository,
  Database,
  FlavorRepository,
  JobRepository,
  JobHoldsRepository,
  KubeNamespacesRepository,
  NodeRepository,
  NodeDrainRepository,
  PriorityClassRepository,
  QuotaRepository,
  SchedulerStateRepository,
  TeamRepository,
  TokenRepository,
  UsageRepository,
} from '#db';
import type { CycleRunnerPort } from '../scheduler/cycle-runner.port.js';
import { CYCLE_RUNNER, LOGGER, REDIS, REDIS_PREFIX } from './tokens.js';

/** Shared handles of one process: configuration, logger, database, Redis. */
export interface Infrastructure {
  config: Config;
  logger: Logger;
  database: Database;
  redis: Redis;
  /** Key prefix in Redis (QM_REDIS_PREFIX; default `qm`): state shared by the API replicas (submission rates) goes under it. */
  redisPrefix?: string;
  /** One scheduling cycle on demand (POST /v1/scheduler/cycles). */
  cycles: CycleRunnerPort;
}

const REPOSITORIES = [
  TokenRepository,
  FlavorRepository,
  CohortRepository,
  TeamRepository,
  QuotaRepository,
  NodeRepository,
  NodeDrainRepository,
  JobRepository,
  JobHoldsRepository,
  SchedulerStateRepository,
  UsageRepository,
  PriorityClassRepository,
  KubeNamespacesRepository,
] as const;

/**
 * Provides the infrastructure handles and the repositories over them (Immich style: services take
 * repositories by injection; nothing else touches SQL). The handles are created by the caller, who
 * owns their lifetime (createApiApp closes what it created).
 */
@Global()
@Module({})
export class InfraModule {
  static forRoot(infra: Infrastructure): DynamicModule {
    const repositories: Provider[] = REPOSITORIES.map((Repo) =>
      Repo === JobRepository
        ? {
            provide: JobRepository,
            useFactory: (db: Database) => new JobRepository(db, { maxGroup: infra.config.submitGroupMax, maxInFlight: infra.config.submitInFlight, defaultMaxPendingJobs: infra.config.teamMaxPendingJobs }),
            inject: [Database],
          }
        : { provide: Repo, useFactory: (db: Database) => new Repo(db), inject: [Database] },
    );
    const providers: Provider[] = [
      { provide: Config, useValue: infra.config },
      { provide: LOGGER, useValue: infra.logger },
      { provide: Database, useValue: infra.database },
      { provide: REDIS, useValue: infra.redis },
      { provide: REDIS_PREFIX, useValue: infra.redisPrefix ?? 'qm' },
      { provide: CYCLE_RUNNER, useValue: infra.cycles },
      ...repositories,
    ];
    return { module: InfraModule, providers, exports: providers };
  }
}
