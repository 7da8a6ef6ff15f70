import type { BudgetedCycleResult, SchedulerOptions, Snapshot } from '#core';
import type { Database } from '#db';
import type { Logger } from 'pino';
import { CycleRunner, type CycleReport } from './cycle-runner.js';
import { defaultHolder, queueSettings } from './scheduler-runtime.js';
import { PgCycleLock } from './pg/pg-cycle-lock.js';
import { PgCycleStore } from './pg/pg-cycle.store.js';
import { ManualCycleFencing } from './pg/pg-lease.store.js';
import type { SchedulerMetrics } from './scheduler-metrics.js';
import { type SchedulerSettings, schedulerOptionsOf } from './scheduler-settings.js';
import { SideEffectQueue } from './side-effect-queue.js';

export interface ManualCycleDeps {
  database: Pick<Database, 'pool'>;
  settings: SchedulerSettings;
  redisUrl: string;
  logger: Logger;
  /** The pure core (`runBudgetedCycle` of #core). */
  schedule: (snapshot: Snapshot) => BudgetedCycleResult;
  options?: SchedulerOptions;
  metrics?: SchedulerMetrics;
}

/**
 * One cycle on demand — what POST /v1/scheduler/cycles calls. The same CycleRunner as the loop, under
 * the same cluster-wide cycle lock, so it cannot double-allocate against the leader; its side effects
 * are enqueued right after its commit.
 */
export class ManualCycle {
  private readonly runner: CycleRunner;
  private readonly queue: SideEffectQueue;
  private readonly fencing: ManualCycleFencing;

  constructor(deps: ManualCycleDeps) {
    const lock = new PgCycleLock(deps.database.pool);
    const store = new PgCycleStore(deps.database, lock, deps.options ?? schedulerOptionsOf(deps.settings));
    this.fencing = new ManualCycleFencing(deps.database, deps.settings.leaseName, `manual:${defaultHolder()}`, deps.settings.leaseTtlMs);
    this.runner = new CycleRunner(store, this.fencing, deps.schedule, deps.logger.child({ trigger: 'manual' }), deps.metrics ? [deps.metrics] : []);
    this.queue = new SideEffectQueue(queueSettings(deps.settings, deps.redisUrl));
  }

  /** Runs one cycle now and returns its report (decisions in `report.result`). */
  async run(): Promise<CycleReport> {
    try {
      const report = await this.runner.runOnce(['manual']);
      await this.queue.enqueue(report.outbox);
      return report;
    } finally {
      await this.fencing.releaseIfTaken();
    }
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
