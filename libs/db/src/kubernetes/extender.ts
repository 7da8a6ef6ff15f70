import type { SqlHandle } from '../scheduling/sql-handle.js';

/** A job's state and the node its replica is allocated to (null: not allocated), for the scheduler extender. */
export async function replicaDecision(
  db: SqlHandle,
  jobId: string,
  replica: number,
): Promise<{ state: string; pendingMessage: string | null; node: string | null } | null> {
  const { rows } = await db.pool.query<{ state: string; pending_message: string | null; node: string | null }>(
    `SELECT j.state::text AS state, j.pending_message, a.node
     FROM jobs j LEFT JOIN allocations a ON a.job_id = j.id AND a.replica = $2 WHERE j.id = $1`,
    [jobId, replica],
  );
  const row = rows[0];
  return row ? { state: row.state, pendingMessage: row.pending_message, node: row.node } : null;
}

/** Accelerators in use on these nodes (our allocations plus others' pods) and their total. */
export async function nodeUsage(db: SqlHandle, names: readonly string[]): Promise<{ name: string; used: number; total: number }[]> {
  const { rows } = await db.pool.query<{ name: string; used: number; total: number }>(
    `SELECT n.name, n.external_accelerators + COALESCE((SELECT sum(a.accelerators) FROM allocations a WHERE a.node = n.name), 0)::int AS used,
            n.accelerators AS total
     FROM nodes n WHERE n.name = ANY($1::text[])`,
    [names],
  );
  return rows;
}
