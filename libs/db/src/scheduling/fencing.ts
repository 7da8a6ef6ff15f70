import type { PoolClient } from 'pg';
import { FencingError } from './errors.js';

/**
 * Locks the lease row (FOR KEY SHARE) and throws FencingError unless its token is ours: the first statement
 * of every fenced write (cycle commit, reconcile's requeue). A takeover (FOR UPDATE, acquireOrRenewLease)
 * waits on the row lock until this transaction ends, then bumps the token, so a deposed leader's later
 * write fails here; the holder's renewals (FOR NO KEY UPDATE) do not wait for it.
 */
export async function assertFencing(client: PoolClient, fencing: { leaseName: string; token: bigint }): Promise<void> {
  const { rows } = await client.query<{ holder: string; fencing_token: string }>(
    'SELECT holder, fencing_token::text AS fencing_token FROM scheduler_leases WHERE name = $1 FOR KEY SHARE',
    [fencing.leaseName],
  );
  const row = rows[0];
  if (!row || BigInt(row.fencing_token) !== fencing.token) {
    throw new FencingError(fencing.leaseName, fencing.token, row ? { holder: row.holder, fencingToken: BigInt(row.fencing_token) } : null);
  }
}
