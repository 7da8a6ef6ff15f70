import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountingModule } from './accounting/accounting.module.js';
import { AuthGuard } from './auth/auth.guard.js';
import { TokenCache } from './auth/token-cache.js';
import { TokenRevocations } from './auth/token-revocations.js';
import { ConsoleModule } from './console/console.module.js';
import { CohortsController } from './cohorts/cohorts.controller.js';
import { CohortsService } from './cohorts/cohorts.service.js';
import { FlavorsController } from './flavors/flavors.controller.js';
import { FlavorsService } from './flavors/flavors.service.js';
import { HealthController } from './health/health.controller.js';
import { HealthService } from './health/health.service.js';
import { InfraModule, type Infrastructure } from './infra/infra.module.js';
import { JobsController } from './jobs/jobs.controller.js';
import { JobsService } from './jobs/jobs.service.js';
import { JobHoldsController } from './jobs/job-holds.controller.js';
import { JobHoldsService } from './jobs/job-holds.service.js';
import { NodesController } from './nodes/nodes.controller.js';
import { NodesService } from './nodes/nodes.service.js';
import { PriorityClassesController } from './priority-classes/priority-classes.controller.js';
import { PriorityClassesService } from './priority-classes/priority-classes.service.js';
import { PriorityChoiceCache } from './jobs/priority-choices.js';
import { ClusterNamespaces } from './jobs/cluster-namespaces.js';
import { SubmissionLimits, TeamSettingsCache } from './jobs/submission-limits.js';
import { TokenUsage } from './auth/token-usage.js';
import { SchedulerController } from './scheduler/scheduler.controller.js';
import { SchedulerService } from './scheduler/scheduler.service.js';
import { TeamsController } from './teams/teams.controller.js';
import { TeamsService } from './teams/teams.service.js';
import { UsageService } from './teams/usage.service.js';
import { TokensController } from './tokens/tokens.controller.js';
import { TokensService } from './tokens/tokens.service.js';

/** The REST API. Compose it into a larger process with `ApiModule.forRoot(infra)` (see createApiApp). */
@Module({})
export class ApiModule {
  static forRoot(infra: Infrastructure, extra: { imports?: DynamicModule[] } = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [InfraModule.forRoot(infra), ConsoleModule, AccountingModule, ...(extra.imports ?? [])],
      controllers: [
        HealthController,
        TokensController,
        FlavorsController,
        CohortsController,
        PriorityClassesController,
        TeamsController,
        NodesController,
        JobsController,
        JobHoldsController,
        SchedulerController,
      ],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        TokenCache,
        TokenRevocations,
        JobsService,
        JobHoldsService,
        UsageService,
        TokensService,
        FlavorsService,
        CohortsService,
        PriorityClassesService,
        PriorityChoiceCache,
        TeamSettingsCache,
        ClusterNamespaces,
        SubmissionLimits,
        TokenUsage,
        TeamsService,
        NodesService,
        SchedulerService,
        HealthService,
      ],
    };
  }
}
