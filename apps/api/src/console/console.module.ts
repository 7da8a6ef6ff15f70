import { Module } from '@nestjs/common';
import { AuditRepository, CycleHistoryRepository, Database, FleetRepository, QueueRepository } from '#db';
import { AuditController } from './audit.controller.js';
import { ConsoleService } from './console.service.js';
import { FleetController } from './fleet.controller.js';
import { OverviewController } from './overview.controller.js';
import { PlacementController } from './placement.controller.js';
import { QueueController } from './queue.controller.js';

const REPOSITORIES = [QueueRepository, FleetRepository, CycleHistoryRepository, AuditRepository] as const;

/**
 * Read-only endpoints the web console needs beyond the REST contract (queue order, fleet allocation,
 * cycle history, placement with topology, audit trail): thin controllers over ConsoleService.
 * Authorization is the global AuthGuard's.
 */
@Module({
  controllers: [OverviewController, QueueController, FleetController, PlacementController, AuditController],
  providers: [
    ...REPOSITORIES.map((Repo) => ({
      provide: Repo,
      useFactory: (db: Database) => new Repo(db),
      inject: [Database],
    })),
    ConsoleService,
  ],
})
export class ConsoleModule {}
