import type { Logger } from 'pino';
import { exponentialBackoffMs } from './backoff.js';
import type { OutboxRelay } from './outbox-relay.js';
import type { JobStateCount, SchedulerMetrics } from './scheduler-metrics.js';

export interface RequeuedJob {
  jobId: string;
  /** How many times this job has now been requeued for not starting (1 = first time). */
  requeues: number;
  notBefore: Date;
}

/** The database work of reconcile (implemented over libs/db). Every method is one idempotent statement or transaction. */
export interface ReconcileStore {
  /** Deletes allocations of jobs that no longer hold (ended, pending, preempted). Returns rows deleted. */
  releaseEndedAllocations(): Promise<number>;
  /**
   * ADMITTED/BINDING jobs admitted before `admittedBefore`: back to PENDING, allocation released, a
   * transition and an event written, and not schedulable before `backoff(requeues)` ms from `now`.
   * Guarded by the fencing token like a cycle commit.
   */
  requeueStuckAdmissions(input: {
    now: Date;
    admittedBefore: Date;
    backoffMs: (requeues: number) => number;
    fencing: { leaseName: string; token: bigint };
  }): Promise<RequeuedJob[]>;
  countJobs(): Promise<JobStateCount[]>;
  /** The fleet history's sample of this minute (once a minute: later calls in it write nothing), its rollups and retention. */
  recordHistory(now: Date): Promise<number>;
}

export interface ReconcileReport {
  outboxOffered: number;
  allocationsReleased: number;
  requeued: RequeuedJob[];
}

/**
 * Makes the world match Postgres, on start and periodically (leader only):
 * 1. every pending, due outbox entry is offered to the queue again (a flushed Redis loses nothing);
 * 2. allocations of jobs that ended are released;
 * 3. gangs admitted but not RUNNING within the gang timeout are requeued with exponential backoff;
 * 4. job gauges are refreshed;
 * 5. the fleet history gets its sample of the minute (libs/db fleet-history.ts).
 */
export class Reconciler {
  constructor(
    private readonly store: ReconcileStore,
    private readonly relay: OutboxRelay,
    private readonly options: { gangTimeoutMs: number; requeueBackoffBaseMs: number; requeueBackoffMaxMs: number },
    private readonly logger: Logger,
    private readonly metrics?: SchedulerMetrics,
    private readonly clock: () => number = Date.now,
  ) {}

  async run(fencing: { leaseName: string; token: bigint }): Promise<ReconcileReport> {
    const now = new Date(this.clock());
    const allocationsReleased = await this.store.releaseEndedAllocations();
    const { requeueBackoffBaseMs: base, requeueBackoffMaxMs: max } = this.options;
    const requeued = await this.store.requeueStuckAdmissions({
      now,
      admittedBefore: new Date(now.getTime() - this.options.gangTimeoutMs),
      backoffMs: (requeues) => exponentialBackoffMs(requeues, base, max),
      fencing,
    });
    if (requeued.length > 0) this.metrics?.requeues.inc({ reason: 'gang-timeout' }, requeued.length);
    if (this.metrics) this.metrics.setJobCounts(await this.store.countJobs());
    // History is for people reading charts: a failure to record it is logged and never holds back the rest.
    await this.store.recordHistory(now).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'could not record the fleet history sample; the next reconcile tries again');
    });
    // Last, and on its own: Redis being down must not hold back the Postgres work above (it needs none).
    const outboxOffered = await this.relay.enqueueAllDue(now).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'could not offer outbox entries to the queue (Redis); they stay pending in Postgres');
      return 0;
    });
    const report = { outboxOffered, allocationsReleased, requeued };
    if (allocationsReleased > 0 || requeued.length > 0) {
      this.logger.info({ outboxOffered, allocationsReleased, requeued: requeued.map((r) => r.jobId) }, 'reconciled');
    }
    return report;
  }
}
