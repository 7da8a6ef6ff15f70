import { performance } from 'node:perf_hooks';
import { DEFAULT_OPTIONS, type SchedulerOptions, type Snapshot } from '#core';
import { CHANGE_LOG_RETENTION_MS, CycleSession, type CycleRead, type Database, type ReadKind, type SnapshotCache } from '#db';
import type { Logger } from 'pino';
import type { CommitCycleInput, CommitCycleOutcome, CycleStore } from '../cycle-store.js';
import type { PgCycleLock } from './pg-cycle-lock.js';

/**
 * The cycle's persistence through libs/db, two round trips per cycle whatever the number of jobs and
 * nodes (CycleSession): lock + read in one message, commit + unlock in another.
 *
 * Incremental snapshot: the store keeps the snapshot's rows between cycles (SnapshotCache) and reads only
 * what the change log names since the previous read. Every `fullReloadMs` the read is `checked`: the
 * incremental state and a full read of the same transaction are compared, the full one is kept, and a
 * difference is logged at error level and counted (qm_scheduler_snapshot_mismatches_total). A failed
 * cycle drops the cache (the next read is full), and so does a pause longer than half the change log's
 * retention.
 *
 * Jobs requeued with backoff carry a `queuedAt` in the future (their not-before time, see
 * PgReconcileStore); they stay out of the snapshot until then. `queued_at` of a fresh submission is
 * stamped by the database clock, so a tolerance keeps a scheduler whose clock runs behind the
 * database's from ignoring new jobs (a requeued job may start up to that much before its not-before).
 */
export const NOT_BEFORE_CLOCK_TOLERANCE_MS = 2_000;

/** Default of PgCycleStoreOptions.fullReloadMs (QM_SNAPSHOT_FULL_RELOAD_MS). */
export const DEFAULT_FULL_RELOAD_MS = 60_000;

export interface PgCycleStoreOptions {
  /** How often the read is a checked full reload (ms); 0: every cycle reads everything (no incremental snapshot). */
  fullReloadMs?: number;
  logger?: Logger;
  /** Told of every read (kind, rows changed, mismatches of a checked read). */
  onRead?: (read: CycleRead) => void;
}

export class PgCycleStore implements CycleStore {
  private session: CycleSession | null = null;
  private cache: SnapshotCache | null = null;
  private versions: ReadonlyMap<string, number> | undefined;
  private lastReadAt = -Infinity;
  private lastFullAt = -Infinity;
  private readonly fullReloadMs: number;

  constructor(
    private readonly db: Pick<Database, 'pool'>,
    private readonly lock: PgCycleLock,
    private readonly options: SchedulerOptions = DEFAULT_OPTIONS,
    private readonly settings: PgCycleStoreOptions = {},
  ) {
    this.fullReloadMs = settings.fullReloadMs ?? DEFAULT_FULL_RELOAD_MS;
  }

  async withCycleLock<T>(fn: () => Promise<T>): Promise<T> {
    this.session = await CycleSession.open(this.db, this.lock.key);
    try {
      return await fn();
    } catch (error) {
      this.cache = null; // whatever failed, the next cycle starts from a full read
      throw error;
    } finally {
      const session = this.session;
      this.session = null;
      this.versions = undefined;
      await session.close();
    }
  }

  async openCycle(now: number): Promise<{ cycle: number; snapshot: Snapshot }> {
    const session = this.requireSession();
    const at = performance.now();
    const kind = this.nextReadKind(at);
    const { read, cache } = await session.read(kind, this.cache, now, this.options, kind !== 'incremental');
    this.cache = cache;
    this.lastReadAt = at;
    if (kind !== 'incremental') this.lastFullAt = at;
    this.versions = read.versions;
    if (read.mismatches && read.mismatches.length > 0) {
      this.settings.logger?.error(
        { cycle: read.cycleNumber, mismatches: read.mismatches.length, first: read.mismatches.slice(0, 20) },
        'incremental snapshot differs from a full read; the full read is used',
      );
    }
    this.settings.onRead?.(read);
    const snapshot = read.snapshot;
    const eligible = snapshot.pending.filter((job) => (job.queuedAt ?? job.submittedAt) <= now + NOT_BEFORE_CLOCK_TOLERANCE_MS);
    return { cycle: read.cycleNumber, snapshot: eligible.length === snapshot.pending.length ? snapshot : { ...snapshot, pending: eligible } };
  }

  async commitCycle(input: CommitCycleInput): Promise<CommitCycleOutcome> {
    const outcome = await this.requireSession().commit({ ...input, ...(this.versions ? { versions: this.versions } : {}) });
    return { outbox: outcome.outbox, skipped: outcome.skipped };
  }

  /** commitCycle with the guard run while Postgres writes (CycleSession.commitChecked). */
  async commitCycleChecked(input: CommitCycleInput, check: () => void): Promise<CommitCycleOutcome> {
    const outcome = await this.requireSession().commitChecked({ ...input, ...(this.versions ? { versions: this.versions } : {}) }, check);
    return { outbox: outcome.outbox, skipped: outcome.skipped };
  }

  private nextReadKind(at: number): ReadKind {
    if (this.cache === null || this.fullReloadMs === 0 || at - this.lastReadAt > CHANGE_LOG_RETENTION_MS / 2) return 'full';
    return at - this.lastFullAt >= this.fullReloadMs ? 'checked' : 'incremental';
  }

  private requireSession(): CycleSession {
    if (!this.session) throw new Error('PgCycleStore: openCycle and commitCycle run inside withCycleLock');
    return this.session;
  }
}
