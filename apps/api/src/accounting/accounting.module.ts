import { Module } from '@nestjs/common';
import { BudgetRepository, Database, UsageLedgerRepository } from '#db';
import { AccountingMetrics } from './accounting-metrics.js';
import { AccountingService } from './accounting.service.js';
import { BudgetWatcher } from './budget-watcher.js';
import { BudgetsService } from './budgets.service.js';
import { BudgetsController } from './budgets.controller.js';
import { UsageController } from './usage.controller.js';

/** Usage ledger, price history and budgets over REST (GET /v1/usage, budgets), their metrics and the budget watcher. */
@Module({
  controllers: [UsageController, BudgetsController],
  providers: [
    { provide: UsageLedgerRepository, useFactory: (db: Database) => new UsageLedgerRepository(db), inject: [Database] },
    { provide: BudgetRepository, useFactory: (db: Database) => new BudgetRepository(db), inject: [Database] },
    AccountingService,
    BudgetsService,
    BudgetWatcher,
    AccountingMetrics,
  ],
})
export class AccountingModule {}
