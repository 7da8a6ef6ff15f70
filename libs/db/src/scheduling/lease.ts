import type { PoolClient } from 'pg';
import { inTransaction } from '../repositories/db-handle.js';
import type { SqlHandle } from './sql-handle.js';

export interface LeaseState {
  /** True when `holder` holds the lease after the call. */
  held: boolean;
  /** The holder after the call (another process when `held` is false; '' when released). */
  holder: string;
  /** Grows by one on every change of holder; unchanged by renewals. */
  fencingToken: bigint;
  expiresAt: Date;
}

interface LeaseRow {
  holder: string;
  fencing_token: string;
  expires_at: Date;
}

/**
 * Takes the lease `name` for `holder` when it is free, expired or already its own, renewing it for
 * `ttlMs`; otherwise reports the current holder. Timed by the database clock (clock_timestamp(): the time
 * the row is written, after any wait for its lock) so replicas' clock skew does not matter. The fencing
 * token increments whenever the holder changes, so a deposed leader's commits fail their fencing check
 * (see commitCycle).
 *
 * Row locks (ADR 0004): a fenced write (cycle commit, reconcile) holds FOR KEY SHARE on the lease row until
 * its transaction ends. The holder's renewal is a plain UPDATE of non-key columns (FOR NO KEY UPDATE),
 * which does not wait for it: a long commit does not hold up its own leader's renewals. Anything else — a
 * takeover, the first acquisition — first locks the row FOR UPDATE, which waits for every fenced write in
 * flight, so a standby cannot take the lease (and bump the token) under a commit.
 */
export async function acquireOrRenewLease(db: SqlHandle, name: string, holder: string, ttlMs: number): Promise<LeaseState> {
  if (holder === '') throw new Error('lease holder must be a non-empty string');
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new Error(`lease ttlMs must be a positive integer, got ${ttlMs}`);
  const renewed = await db.pool.query<LeaseRow>(
    `UPDATE scheduler_leases SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
     WHERE name = $1 AND holder = $2
     RETURNING holder, fencing_token::text AS fencing_token, expires_at`,
    [name, holder, ttlMs],
  );
  const mine = renewed.rows[0];
  if (mine) return { held: true, holder: mine.holder, fencingToken: BigInt(mine.fencing_token), expiresAt: mine.expires_at };
  // Another holder's live lease: no lock to wait for (a standby's rounds do not queue behind commits).
  const { rows } = await db.pool.query<LeaseRow>(
    `SELECT holder, fencing_token::text AS fencing_token, expires_at FROM scheduler_leases
     WHERE name = $1 AND holder <> $2 AND expires_at > clock_timestamp()`,
    [name, holder],
  );
  const live = rows[0];
  if (live) return { held: false, holder: live.holder, fencingToken: BigInt(live.fencing_token), expiresAt: live.expires_at };
  return takeOver(db, name, holder, ttlMs);
}

/** Not the holder: take the lease if it is free or expired, under FOR UPDATE (see acquireOrRenewLease). */
async function takeOver(db: SqlHandle, name: string, holder: string, ttlMs: number): Promise<LeaseState> {
  return inTransaction(db.pool, async (client) => {
    // A first acquisition: a free, long-expired row to lock (never seen outside this transaction).
    await client.query(
      `INSERT INTO scheduler_leases (name, holder, fencing_token, acquired_at, renewed_at, expires_at)
       VALUES ($1, '', 0, to_timestamp(0), to_timestamp(0), to_timestamp(0)) ON CONFLICT (name) DO NOTHING`,
      [name],
    );
    // Waits for every fenced write in flight (they hold FOR KEY SHARE), then reads the row's latest version.
    await client.query('SELECT 1 FROM scheduler_leases WHERE name = $1 FOR UPDATE', [name]);
    const taken = await client.query<LeaseRow>(
      `UPDATE scheduler_leases l SET
         holder = $2,
         fencing_token = CASE WHEN l.holder = $2 THEN l.fencing_token ELSE l.fencing_token + 1 END,
         acquired_at = CASE WHEN l.holder = $2 THEN l.acquired_at ELSE clock_timestamp() END,
         renewed_at = clock_timestamp(),
         expires_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
       WHERE l.name = $1 AND (l.holder = $2 OR l.expires_at <= clock_timestamp())
       RETURNING holder, fencing_token::text AS fencing_token, expires_at`,
      [name, holder, ttlMs],
    );
    const mine = taken.rows[0];
    return mine ? { held: true, holder: mine.holder, fencingToken: BigInt(mine.fencing_token), expiresAt: mine.expires_at } : readRow(client, name);
  });
}

async function readRow(client: PoolClient, name: string): Promise<LeaseState> {
  const current = await client.query<LeaseRow>(
    'SELECT holder, fencing_token::text AS fencing_token, expires_at FROM scheduler_leases WHERE name = $1',
    [name],
  );
  const row = current.rows[0];
  if (!row) throw new Error(`lease ${name} vanished while being acquired`);
  return { held: false, holder: row.holder, fencingToken: BigInt(row.fencing_token), expiresAt: row.expires_at };
}

/**
 * Gives the lease up when `holder` has it (graceful shutdown): it has no holder and expired long ago
 * (the epoch, not `now()`: a later transaction's `now()` can read the same or an earlier instant when the
 * database clock is stepped), so a standby takes it at once, with a new fencing token.
 */
export async function releaseLease(db: SqlHandle, name: string, holder: string): Promise<void> {
  await db.pool.query(
    `UPDATE scheduler_leases SET holder = '', expires_at = to_timestamp(0), renewed_at = now()
     WHERE name = $1 AND holder = $2`,
    [name, holder],
  );
}

/** The lease row, or null. */
export async function readLease(db: SqlHandle, name: string): Promise<LeaseState | null> {
  const { rows } = await db.pool.query<LeaseRow & { live: boolean }>(
    `SELECT holder, fencing_token::text AS fencing_token, expires_at, expires_at > now() AS live
     FROM scheduler_leases WHERE name = $1`,
    [name],
  );
  const row = rows[0];
  if (!row) return null;
  return { held: row.live && row.holder !== '', holder: row.holder, fencingToken: BigInt(row.fencing_token), expiresAt: row.expires_at };
}
