import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { Config } from '#common';
import { BudgetRepository, WARN_AT } from '#db';
import { LOGGER } from '../infra/tokens.js';

/**
 * Records budgets that reached 80% and 100% of their limit in the current period: one event each
 * (budget.warning, budget.exhausted), once per budget and period, whichever API replica sees it first
 * (budget_alerts is the claim). Runs every QM_BUDGET_CHECK_INTERVAL_MS, and after a budget is set.
 * Blocking and stopping need no watcher: each scheduling cycle reads the ledger (Snapshot.budgetBlocks,
 * budgetStops) and stops the running jobs of a used-up `stop` budget in that cycle.
 */
@Injectable()
export class BudgetWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(BudgetRepository) private readonly budgets: BudgetRepository,
    @Inject(Config) private readonly config: Config,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.budgetCheckIntervalMs === 0) return;
    this.timer = setInterval(() => void this.check().catch((error: unknown) => this.logger.warn({ err: error }, 'budget check failed')), this.config.budgetCheckIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Checks every budget (or those of `teams`); returns the ids of the events written. */
  async check(teams?: readonly string[]): Promise<string[]> {
    const work = (async (): Promise<string[]> => {
      const written: string[] = [];
      for (const b of await this.budgets.statuses(new Date(), teams)) {
        if (b.ratio >= WARN_AT) {
          const id = await this.budgets.recordAlert(b, 80);
          if (id !== null) written.push(id);
        }
        if (b.state === 'exhausted') {
          const id = await this.budgets.recordAlert(b, 100);
          if (id !== null) written.push(id);
        }
      }
      for (const id of written) this.logger.info({ eventId: id }, 'budget threshold reached');
      return written;
    })();
    // Shutdown waits for it, failed or not; the caller gets the failure. (`work.then(() => undefined)` alone
    // rejected too, with no one to handle it: a check failing on a lost Postgres killed the process.)
    this.running = work.then(
      () => undefined,
      () => undefined,
    );
    return work;
  }
}
