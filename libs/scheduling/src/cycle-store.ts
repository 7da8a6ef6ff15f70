import type { BudgetedCycleResult, Snapshot } from '#core';
import type { OutboxRef } from './outbox-store.js';

/** Fencing of a commit: the lease the committer believes it holds, and that lease's token. */
export interface CommitFencing {
  leaseName: string;
  token: bigint;
}

export interface CommitCycleInput {
  /** The decisions, with the running jobs used-up `stop` budgets stop. */
  result: BudgetedCycleResult;
  now: number;
  fencing: CommitFencing;
  cycleNumber: number;
  leader: string;
  durationMs: number;
}

/** What the commit wrote: the outbox entries it created, so the relay can enqueue them right away. */
export interface CommitCycleOutcome {
  outbox: OutboxRef[];
  /** Decisions not written because their job moved on since the snapshot (cancelled meanwhile, ...). */
  skipped?: { jobId: string; reason: string }[];
}

/**
 * The persistence the cycle runner needs (implemented over libs/db). All calls of one cycle happen while
 * `withCycleLock` holds the cross-process cycle lock.
 */
export interface CycleStore {
  /** Runs `fn` holding the cluster-wide cycle lock (a Postgres advisory lock): cycles never overlap. */
  withCycleLock<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Called under the lock, first: the number of this cycle (one more than the last committed) and the
   * snapshot at `now` (pending, running, nodes, teams, quotas). A store may take the cross-process lock
   * itself here, in the same round trip as its reads (PgCycleStore does).
   */
  openCycle(now: number): Promise<{ cycle: number; snapshot: Snapshot }>;
  /**
   * One transaction: checks the fencing token, then writes allocations, transitions, reasons, events and
   * outbox entries. Throws FencingError when the lease moved on.
   */
  commitCycle(input: CommitCycleInput): Promise<CommitCycleOutcome>;
  /**
   * Optional: the same commit with `check` (the guard) run while the store writes, committing only if it
   * returns; if it throws, nothing is committed and its error is rethrown. The runner uses it for large
   * cycles (CycleRunner: OVERLAPPED_CHECK_MIN_DECISIONS); a store without it gets the guard before commitCycle.
   */
  commitCycleChecked?(input: CommitCycleInput, check: () => void): Promise<CommitCycleOutcome>;
}

/** Where the runner gets its fencing from: the elector (leader) or the current lease row (manual cycles). */
export interface FencingSource {
  current(): Promise<(CommitFencing & { holder: string }) | null>;
}
