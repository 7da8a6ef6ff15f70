import type { SqlHandle } from './sql-handle.js';

/** Key of the cluster-wide scheduling lock (pg advisory lock space; distinct from the migration lock). */
export const CYCLE_LOCK_KEY = 0x51_4d_43_59; // "QMCY"

/**
 * The cross-process mutex around load → decide → commit (and reconcile's writes): a session-level
 * Postgres advisory lock on one dedicated connection. A process that dies drops its connection, and
 * Postgres releases the lock with it — no stale lock survives a crash.
 */
export class CycleLock {
  constructor(
    private readonly db: SqlHandle,
    readonly key: number = CYCLE_LOCK_KEY,
  ) {}

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    const client = await this.db.pool.connect();
    let broken = false;
    try {
      await client.query('SELECT pg_advisory_lock($1)', [this.key]);
      try {
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [this.key]).catch(() => {
          broken = true; // the session is gone; so is the lock
        });
      }
    } finally {
      client.release(broken);
    }
  }
}
