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
 * `ttlMs`; otherwise reports the current holder. One statement (an upsert), timed by the database
 * clock so replicas' clock skew does not matter. The fencing token increments whenever the holder
 * changes, so a deposed leader's commits fail their fencing check (see commitCycle).
 */
export async function acquireOrRenewLease(db: SqlHandle, name: string, holder: string, ttlMs: number): Promise<LeaseState> {
  if (holder === '') throw new Error('lease holder must be a non-empty string');
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new Error(`lease ttlMs must be a positive integer, got ${ttlMs}`);
  const taken = await db.pool.query<LeaseRow>(
    `INSERT INTO scheduler_leases AS l (name, holder, fencing_token, acquired_at, renewed_at, expires_at)
     VALUES ($1, $2, 1, now(), now(), now() + make_interval(secs => $3::float8 / 1000))
     ON CONFLICT (name) DO UPDATE SET
       holder = EXCLUDED.holder,
       fencing_token = CASE WHEN l.holder = EXCLUDED.holder THEN l.fencing_token ELSE l.fencing_token + 1 END,
       acquired_at = CASE WHEN l.holder = EXCLUDED.holder THEN l.acquired_at ELSE now() END,
       renewed_at = now(),
       expires_at = EXCLUDED.expires_at
     WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
     RETURNING holder, fencing_token::text AS fencing_token, expires_at`,
    [name, holder, ttlMs],
  );
  const mine = taken.rows[0];
  if (mine) return { held: true, holder: mine.holder, fencingToken: BigInt(mine.fencing_token), expiresAt: mine.expires_at };
  const current = await db.pool.query<LeaseRow>(
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
