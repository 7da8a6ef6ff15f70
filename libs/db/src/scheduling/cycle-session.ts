import type { BudgetedSnapshot, SchedulerOptions } from '#core';
import type { Writable } from 'node:stream';
import type { PoolClient, QueryResult } from 'pg';
import { readBudgetLimits } from '../accounting/budgets.js';
import { cycleCommit, fencingErrorOf, runMessage, type CommitCycleInput, type CommitCycleOutcome } from './commit-cycle.js';
import { CYCLE_LOCK_KEY } from './cycle-lock.js';
import type { SnapshotWithVersions } from './load-snapshot.js';
import type { SqlHandle } from './sql-handle.js';
import {
  activeJobsSql,
  allocationsSql,
  cohortsSql,
  flavorsSql,
  nodesSql,
  quotasSql,
  teamsSql,
  type ActiveJobRow,
  type AllocationRow,
  type FlavorRow,
  type NodeRow,
  type QuotaRow,
  type TeamRow,
} from './snapshot-rows.js';
import { SnapshotState, type SnapshotRows } from './snapshot-state.js';

/** How long the change log keeps its rows; a leader whose last read is older reads everything again. */
export const CHANGE_LOG_RETENTION_MS = 10 * 60_000;

/** What a cycle read, and how. */
export interface CycleRead extends SnapshotWithVersions {
  /** The number of this cycle: one more than the last committed. */
  cycleNumber: number;
  /** `full`: every row; `incremental`: what the change log named since the previous read; `checked`: both, compared. */
  kind: 'full' | 'incremental' | 'checked';
  /** Jobs and nodes the change log named (incremental and checked reads). */
  changed: number;
  /** A checked read: where the incremental state differed from the full read (empty: equal). */
  mismatches?: string[];
}

/** How to read: `incremental` needs a state to bring up to date. */
export type ReadKind = CycleRead['kind'];

/**
 * The leader's copy of the snapshot between cycles (SnapshotState), with the change-log position it is
 * up to date with: `xmin` of the snapshot of the read that filled it (every transaction below it had
 * ended then, so the change-log rows with xid ≥ xmin name everything that read may have missed).
 */
export interface SnapshotCache {
  state: SnapshotState;
  xmin: string;
}

/**
 * One scheduling cycle's conversation with Postgres, on one connection, in two round trips:
 *
 *   read    ONE message: take the cluster-wide cycle lock (session advisory lock), then in one
 *           REPEATABLE READ, READ ONLY transaction the last cycle number, the change log since the cache's
 *           position and the rows it names (incremental), or every row (full), or both (checked);
 *   commit  ONE message: the cycle's commit transaction (commit-cycle.ts) followed by the unlock.
 *
 * An idle cycle (nothing to commit) ends with `close()`, which unlocks (a third message only then). A
 * team with a `block` or `stop` budget adds the budget reads of readBudgetLimits (one per period kind in use).
 */
export class CycleSession {
  private locked = false;
  private closed = false;

  private constructor(
    private readonly client: PoolClient,
    private readonly lockKey: number,
  ) {}

  /** A session on a connection of the pool (no lock yet: the first read takes it). */
  static async open(db: SqlHandle, lockKey: number = CYCLE_LOCK_KEY): Promise<CycleSession> {
    return new CycleSession(await db.pool.connect(), lockKey);
  }

  /**
   * Takes the lock (if not held yet) and reads the snapshot at `now`: `full` into a new cache,
   * `incremental` into `cache`, `checked` both and compares them (the full read wins). Returns the read
   * and the cache to keep for the next cycle.
   */
  async read(
    kind: ReadKind,
    cache: SnapshotCache | null,
    now: number,
    options: SchedulerOptions,
    prune = false,
  ): Promise<{ read: CycleRead; cache: SnapshotCache }> {
    if (kind !== 'full' && cache === null) throw new Error(`an ${kind} read needs the previous read's cache`);
    const statements: string[] = [];
    if (!this.locked || prune) {
      statements.push('BEGIN');
      if (!this.locked) statements.push(`SELECT pg_advisory_lock(${Math.trunc(this.lockKey)})`);
      if (prune) statements.push(`DELETE FROM snapshot_changes WHERE at < clock_timestamp() - interval '${CHANGE_LOG_RETENTION_MS} milliseconds'`);
      statements.push('COMMIT');
    }
    statements.push('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const since = kind === 'full' ? null : xid8(cache!.xmin);
    const changedSince = (entity: string): string => `SELECT key FROM snapshot_changes WHERE entity = '${entity}' AND xid >= ${since}`;
    const headAt = statements.push(
      `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
              (SELECT number::text FROM scheduler_cycles ORDER BY id DESC LIMIT 1) AS last_cycle,
              EXISTS (SELECT 1 FROM budgets WHERE on_exhausted IN ('block', 'stop')) AS budget_blocks,
              ${since === null ? 'NULL' : `ARRAY(SELECT DISTINCT entity FROM snapshot_changes WHERE xid >= ${since})`} AS changed`,
    ) - 1;
    let deltaAt = -1;
    if (since !== null) {
      deltaAt = statements.length;
      const tableChanged = (entity: string): string => `EXISTS (${changedSince(entity)})`;
      statements.push(
        flavorsSql(tableChanged('flavor')),
        cohortsSql(tableChanged('cohort')),
        teamsSql(tableChanged('team')),
        quotasSql(tableChanged('quota')),
        nodesSql(`name IN (${changedSince('node')})`),
        `SELECT DISTINCT key FROM snapshot_changes WHERE entity = 'node' AND xid >= ${since}`,
        activeJobsSql(`j.id IN (SELECT key::uuid FROM snapshot_changes WHERE entity = 'job' AND xid >= ${since})`),
        allocationsSql(`a.job_id IN (SELECT key::uuid FROM snapshot_changes WHERE entity = 'job' AND xid >= ${since})`),
        `SELECT DISTINCT key FROM snapshot_changes WHERE entity = 'job' AND xid >= ${since}`,
      );
    }
    let fullAt = -1;
    if (kind !== 'incremental') {
      fullAt = statements.length;
      statements.push(flavorsSql(), cohortsSql(), teamsSql(), quotasSql(), nodesSql(), activeJobsSql(), allocationsSql());
    }
    statements.push('COMMIT');

    let results: QueryResult[];
    try {
      results = await runMessage(this.client, statements);
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      this.locked = true; // it may have been taken before the error: close() unlocks (a no-op when not held)
      throw error;
    }
    this.locked = true;

    const head = results[headAt]!.rows[0] as { xmin: string; last_cycle: string | null; budget_blocks: boolean; changed: string[] | null };
    const rowsAt = (i: number): unknown[] => results[i]!.rows;
    let state: SnapshotState;
    let changed = 0;
    let mismatches: string[] | undefined;
    if (since !== null) {
      const tables = new Set(head.changed ?? []);
      const delta: SnapshotRows = {
        nodes: rowsAt(deltaAt + 4) as NodeRow[],
        nodeKeys: (rowsAt(deltaAt + 5) as { key: string }[]).map((r) => r.key),
        jobs: rowsAt(deltaAt + 6) as ActiveJobRow[],
        allocations: rowsAt(deltaAt + 7) as AllocationRow[],
        jobKeys: (rowsAt(deltaAt + 8) as { key: string }[]).map((r) => r.key),
      };
      if (tables.has('flavor')) delta.flavors = rowsAt(deltaAt) as FlavorRow[];
      if (tables.has('cohort')) delta.cohorts = rowsAt(deltaAt + 1) as { name: string }[];
      if (tables.has('team')) delta.teams = rowsAt(deltaAt + 2) as TeamRow[];
      if (tables.has('quota')) delta.quotas = rowsAt(deltaAt + 3) as QuotaRow[];
      changed = delta.nodeKeys!.length + delta.jobKeys!.length;
      state = cache!.state;
      state.apply(delta);
    }
    if (fullAt >= 0) {
      const full = SnapshotState.from({
        flavors: rowsAt(fullAt) as FlavorRow[],
        cohorts: rowsAt(fullAt + 1) as { name: string }[],
        teams: rowsAt(fullAt + 2) as TeamRow[],
        quotas: rowsAt(fullAt + 3) as QuotaRow[],
        nodes: rowsAt(fullAt + 4) as NodeRow[],
        jobs: rowsAt(fullAt + 5) as ActiveJobRow[],
        allocations: rowsAt(fullAt + 6) as AllocationRow[],
      });
      if (kind === 'checked') mismatches = state!.differences(full);
      state = full;
    }

    const { snapshot, versions } = state!.snapshot(now, options);
    let out: BudgetedSnapshot = snapshot;
    if (head.budget_blocks) {
      // Teams whose `block` or `stop` budget is used up for the current period (usage ledger).
      const { blocks, stops } = await readBudgetLimits(this.client, new Date(now));
      if (blocks.length > 0) out = { ...out, budgetBlocks: blocks };
      if (stops.length > 0) out = { ...out, budgetStops: stops };
    }
    const cycleNumber = head.last_cycle === null ? 1 : Number(head.last_cycle) + 1;
    const read: CycleRead = { snapshot: out, versions, cycleNumber, kind, changed, ...(mismatches ? { mismatches } : {}) };
    return { read, cache: { state: state!, xmin: head.xmin } };
  }

  /** Commits the cycle's decisions and releases the lock, in one message (see commitCycle). */
  async commit(input: CommitCycleInput): Promise<CommitCycleOutcome> {
    const commit = cycleCommit(input);
    const statements = [...commit.statements];
    if (this.locked) statements.push(`SELECT pg_advisory_unlock(${Math.trunc(this.lockKey)})`);
    try {
      const results = await runMessage(this.client, statements);
      this.locked = false;
      return commit.read(results);
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw fencingErrorOf(error, input.fencing) ?? error;
    }
  }

  /**
   * The commit with `check` run while Postgres writes: the transaction's statements go out in one
   * message without their COMMIT; once that message has left this process, `check` runs (CPU work here
   * overlapping the writes there); the COMMIT (and the unlock) follow in a second message only if it
   * returned — if it throws, the transaction is rolled back and its error rethrown. Atomic as `commit`;
   * one round trip more, for the time of `check` taken off a large cycle.
   */
  async commitChecked(input: CommitCycleInput, check: () => void): Promise<CommitCycleOutcome> {
    const commit = cycleCommit(input);
    const last = commit.statements.length - 1;
    if (commit.statements[last] !== 'COMMIT') throw new Error('a cycle commit ends with COMMIT');
    let checked = false;
    try {
      const writes = runMessage(this.client, commit.statements.slice(0, last));
      writes.catch(() => undefined); // awaited below; an error of the check comes first
      await sent(this.client);
      check();
      checked = true;
      const results = await writes;
      const end = ['COMMIT', ...(this.locked ? [`SELECT pg_advisory_unlock(${Math.trunc(this.lockKey)})`] : [])];
      await runMessage(this.client, end);
      this.locked = false;
      return commit.read(results);
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw checked ? (fencingErrorOf(error, input.fencing) ?? error) : error;
    }
  }

  /** Releases the lock if still held, and the connection (dropped when the unlock could not be sent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let broken = false;
    if (this.locked) {
      await this.client.query(`SELECT pg_advisory_unlock(${Math.trunc(this.lockKey)})`).catch(() => {
        broken = true; // the session is gone; so is the lock
      });
      this.locked = false;
    }
    this.client.release(broken);
  }
}

/**
 * Resolves once what was written to the connection has left this process (the socket's buffer drained):
 * a message still buffered here is not being executed there, and a synchronous `check` would hold it back.
 */
async function sent(client: PoolClient): Promise<void> {
  const stream = (client as unknown as { connection?: { stream?: Writable } }).connection?.stream;
  while (stream !== undefined && stream.writableLength > 0 && !stream.destroyed) {
    // An error or a close ends the wait too: it fails the message itself.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        for (const event of ['drain', 'close', 'error']) stream.off(event, done);
        resolve();
      };
      for (const event of ['drain', 'close', 'error']) stream.on(event, done);
    });
  }
}

/** A change-log position as a SQL literal (it came from Postgres; checked anyway, it is inlined). */
function xid8(xmin: string): string {
  if (!/^\d+$/.test(xmin)) throw new Error(`not a transaction id: ${JSON.stringify(xmin)}`);
  return `'${xmin}'::xid8`;
}
