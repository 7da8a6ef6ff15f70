import { DEFAULT_OPTIONS, type SchedulerOptions, type Snapshot } from '#core';
import { commitCycle, loadSnapshotWithVersions, nextCycleNumber, type Database } from '#db';
import type { CommitCycleInput, CommitCycleOutcome, CycleStore } from '../cycle-store.js';
import type { PgCycleLock } from './pg-cycle-lock.js';

/**
 * The cycle's persistence through libs/db: snapshot (one REPEATABLE READ transaction, with job
 * versions) and commit (one transaction, fencing first, admissions checked against those versions).
 *
 * Jobs requeued with backoff carry a `queuedAt` in the future (their not-before time, see
 * PgReconcileStore); they stay out of the snapshot until then. `queued_at` of a fresh submission is
 * stamped by the database clock, so a tolerance keeps a scheduler whose clock runs behind the
 * database's from ignoring new jobs (a requeued job may start up to that much before its not-before).
 */
export const NOT_BEFORE_CLOCK_TOLERANCE_MS = 2_000;

export class PgCycleStore implements CycleStore {
  private versions: ReadonlyMap<string, number> | undefined;

  constructor(
    private readonly db: Pick<Database, 'pool'>,
    private readonly lock: PgCycleLock,
    private readonly options: SchedulerOptions = DEFAULT_OPTIONS,
  ) {}

  withCycleLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.withLock(async () => {
      try {
        return await fn();
      } finally {
        this.versions = undefined;
      }
    });
  }

  nextCycleNumber(): Promise<number> {
    return nextCycleNumber(this.db);
  }

  async loadSnapshot(now: number): Promise<Snapshot> {
    const { snapshot, versions } = await loadSnapshotWithVersions(this.db, now, this.options);
    this.versions = versions;
    const eligible = snapshot.pending.filter((job) => (job.queuedAt ?? job.submittedAt) <= now + NOT_BEFORE_CLOCK_TOLERANCE_MS);
    return eligible.length === snapshot.pending.length ? snapshot : { ...snapshot, pending: eligible };
  }

  async commitCycle(input: CommitCycleInput): Promise<CommitCycleOutcome> {
    const outcome = await commitCycle(this.db, { ...input, ...(this.versions ? { versions: this.versions } : {}) });
    return { outbox: outcome.outbox, skipped: outcome.skipped };
  }
}
