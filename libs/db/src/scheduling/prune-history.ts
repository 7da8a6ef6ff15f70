import type { SqlHandle } from './sql-handle.js';

export interface PruneOptions {
  /** Epoch ms: the current time. */
  now: number;
  /** Outbox entries `done` longer ago than this are deleted (failed ones are kept for operators). */
  outboxDoneRetentionMs: number;
  /** scheduler_cycles rows older than this are deleted. */
  cycleRetentionMs: number;
  /** Most rows deleted per table per call, so one call never holds locks for long (default 10,000). */
  batch?: number;
}

export interface PruneResult {
  outbox: number;
  cycles: number;
}

/**
 * Deletes history that only grows: finished outbox entries and old cycle rows. Events and job
 * transitions are the audit log and are kept. Call it periodically (e.g. from reconcile); each call
 * deletes at most `batch` rows per table, oldest first.
 */
export async function pruneHistory(db: SqlHandle, options: PruneOptions): Promise<PruneResult> {
  const batch = options.batch ?? 10_000;
  if (!Number.isInteger(batch) || batch <= 0) throw new Error(`batch must be a positive integer, got ${batch}`);
  const outbox = await db.pool.query(
    `DELETE FROM outbox WHERE id IN (
       SELECT id FROM outbox WHERE status = 'done' AND done_at < $1 ORDER BY id LIMIT $2)`,
    [new Date(options.now - options.outboxDoneRetentionMs), batch],
  );
  const cycles = await db.pool.query(
    `DELETE FROM scheduler_cycles WHERE id IN (
       SELECT id FROM scheduler_cycles WHERE started_at < $1 ORDER BY id LIMIT $2)
     AND id <> (SELECT max(id) FROM scheduler_cycles)`,
    [new Date(options.now - options.cycleRetentionMs), batch],
  );
  return { outbox: outbox.rowCount ?? 0, cycles: cycles.rowCount ?? 0 };
}
