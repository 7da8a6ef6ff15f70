import { DEFAULT_HISTORY_RETENTION, GANG_TIMEOUT_REASON, countActiveJobs, recordFleetHistory, releaseEndedAllocations, requeueStuckAdmissions, type HistoryRetention, type SqlHandle } from '#db';
import type { RequeuedJob, ReconcileStore } from '../reconciler.js';
import type { JobStateCount } from '../scheduler-metrics.js';
import type { PgCycleLock } from './pg-cycle-lock.js';

export { GANG_TIMEOUT_REASON };

/**
 * Reconcile's writes (libs/db/src/scheduling/reconcile.ts). Each runs under the cycle lock, so it never
 * interleaves with a cycle's load → commit, and the requeue checks the fencing token like a commit does.
 *
 * Backoff of a requeued gang: its `queued_at` is set to the not-before time, and the cycle store leaves
 * jobs whose `queued_at` lies in the future out of the snapshot (ordering uses `submitted_at`, so the
 * job keeps its place once it is eligible again).
 */
export class PgReconcileStore implements ReconcileStore {
  private readonly db: SqlHandle;

  constructor(
    pool: SqlHandle['pool'],
    private readonly lock: PgCycleLock,
    private readonly retention: HistoryRetention = DEFAULT_HISTORY_RETENTION,
  ) {
    this.db = { pool };
  }

  releaseEndedAllocations(): Promise<number> {
    return this.lock.withLock(() => releaseEndedAllocations(this.db));
  }

  requeueStuckAdmissions(input: Parameters<ReconcileStore['requeueStuckAdmissions']>[0]): Promise<RequeuedJob[]> {
    return this.lock.withLock(() => requeueStuckAdmissions(this.db, input));
  }

  countJobs(): Promise<JobStateCount[]> {
    return countActiveJobs(this.db);
  }

  recordHistory(now: Date): Promise<number> {
    return recordFleetHistory(this.db.pool, now, this.retention);
  }
}
