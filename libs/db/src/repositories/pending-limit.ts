import type { PoolClient } from 'pg';
import { inTransaction, type DbHandle } from './db-handle.js';

/**
 * A submission refused because its team already has as many PENDING jobs as its limit allows
 * (`teams.max_pending_jobs`, or the default when null). Nothing of it was written.
 */
export class PendingLimitError extends Error {
  override name = 'PendingLimitError';
  constructor(
    readonly team: string,
    /** The team's limit (maxPendingJobs) when the submission was refused. */
    readonly limit: number,
    /** Its PENDING jobs then (counted up to the limit). */
    readonly pending: number,
  ) {
    super(`team ${team} has ${pending} pending job(s), as many as its limit maxPendingJobs = ${limit} allows`);
  }
}

/** The default limit of teams whose own is not set; absent: submissions are not capped (the Kubernetes importers). */
export interface PendingLimitOptions {
  defaultMaxPendingJobs?: number;
}

export interface PendingLimitParts<S> {
  /** The default of teams whose max_pending_jobs is null. */
  defaultMax: number;
  teamOf: (s: S) => string;
  /** The Idempotency-Key of a submission and whose keys it is among, or null. */
  keyOf: (s: S) => { scope: string; key: string } | null;
}

/**
 * Runs `insert` for the submissions of a group that fit under their teams' pending-job limits, and answers
 * the others with a PendingLimitError — all in one transaction that first locks each team's row
 * (`FOR NO KEY UPDATE`, in name order: it waits for another group of the same team, on any API replica,
 * until that one committed, yet does not block foreign-key checks or reads), then counts the team's
 * PENDING jobs with a snapshot taken after the lock. So concurrent submissions never take a team past its
 * limit, however many replicas and groups write at once.
 *
 * Within a group, a team's room goes to its submissions in order. A submission over the limit whose
 * Idempotency-Key is already claimed goes to the statement all the same: it is a replay (or a reused key)
 * and is answered as such, never 429. A team that does not exist is not limited here: the statement says
 * it is unknown. The answers are in the group's order.
 */
export async function insertWithinPendingLimits<S, R>(
  db: DbHandle,
  group: readonly S[],
  parts: PendingLimitParts<S>,
  insert: (admitted: readonly S[], client: PoolClient) => Promise<readonly R[]>,
): Promise<(R | PendingLimitError)[]> {
  const teams = [...new Set(group.map(parts.teamOf))].sort();
  return inTransaction(db.pool, async (client) => {
    const locked = await client.query<{ name: string; max: number }>(
      'SELECT name, COALESCE(max_pending_jobs, $2)::int AS max FROM teams WHERE name = ANY($1::text[]) ORDER BY name FOR NO KEY UPDATE',
      [teams, parts.defaultMax],
    );
    const limits = new Map(locked.rows.map((r) => [r.name, r.max]));
    // A statement of its own, after the locks: its snapshot sees every job committed by whoever held them.
    // Counted up to the limit only, so a full team costs at most `limit` index entries.
    const counted = await client.query<{ name: string; pending: number }>(
      `SELECT t.name, (SELECT count(*)::int FROM (SELECT 1 FROM jobs j WHERE j.team = t.name AND j.state = 'PENDING' LIMIT t.cap) x) AS pending
       FROM unnest($1::text[], $2::int[]) AS t(name, cap)`,
      [[...limits.keys()], [...limits.values()]],
    );
    const pending = new Map(counted.rows.map((r) => [r.name, r.pending]));
    const room = new Map([...limits].map(([team, max]) => [team, Math.max(0, max - (pending.get(team) ?? 0))]));

    const over = new Set<number>();
    group.forEach((s, i) => {
      const team = parts.teamOf(s);
      const left = room.get(team);
      if (left === undefined) return; // unknown team: the statement answers it
      if (left > 0) room.set(team, left - 1);
      else over.add(i);
    });
    // Over the limit but with a key already claimed: a replay, answered by the statement (it writes nothing).
    const keyed = [...over].flatMap((i) => {
      const key = parts.keyOf(group[i]!);
      return key === null ? [] : [{ i, ...key }];
    });
    if (keyed.length > 0) {
      const claimed = await client.query<{ subject: string; key: string }>(
        'SELECT k.subject, k.key FROM idempotency_keys k JOIN unnest($1::text[], $2::text[]) AS c(subject, key) ON k.subject = c.subject AND k.key = c.key',
        [keyed.map((k) => k.scope), keyed.map((k) => k.key)],
      );
      const taken = new Set(claimed.rows.map((r) => JSON.stringify([r.subject, r.key])));
      for (const k of keyed) if (taken.has(JSON.stringify([k.scope, k.key]))) over.delete(k.i);
    }

    const admitted = group.filter((_s, i) => !over.has(i));
    const rows = admitted.length > 0 ? await insert(admitted, client) : [];
    if (rows.length !== admitted.length) throw new Error(`${admitted.length} submissions got ${rows.length} answers`);
    let next = 0;
    return group.map((s, i) => {
      if (!over.has(i)) return rows[next++]!;
      const team = parts.teamOf(s);
      return new PendingLimitError(team, limits.get(team)!, pending.get(team) ?? 0);
    });
  });
}
