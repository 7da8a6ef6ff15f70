import type { SqlHandle } from '../scheduling/sql-handle.js';

/**
 * SQL: the namespace of the pods of job `j` — a workload's, an imported gang's, or the one a REST job was given
 * at submission (its team's) — else NULL (a REST job older than team namespaces: the scheduler's QM_KUBE_NAMESPACE).
 */
export const JOB_PODS_NAMESPACE = `COALESCE(j.template->'workload'->>'namespace', j.template->'importedFrom'->>'namespace', j.namespace)`;

/**
 * A job's state and the node its replica is allocated to (null: not allocated), for the scheduler extender, with
 * the namespace its pods live in when that is not Quartermaster's own (a workload's or an imported gang's).
 */
export async function replicaDecision(
  db: SqlHandle,
  jobId: string,
  replica: number,
): Promise<{ state: string; pendingMessage: string | null; node: string | null; namespace: string | null } | null> {
  const { rows } = await db.pool.query<{ state: string; pending_message: string | null; node: string | null; namespace: string | null }>(
    `SELECT j.state::text AS state, j.pending_message, a.node,
            ${JOB_PODS_NAMESPACE} AS namespace
     FROM jobs j LEFT JOIN allocations a ON a.job_id = j.id AND a.replica = $2 WHERE j.id = $1`,
    [jobId, replica],
  );
  const row = rows[0];
  return row ? { state: row.state, pendingMessage: row.pending_message, node: row.node, namespace: row.namespace } : null;
}

/** A node's accelerators as the extender weighs them. */
export interface NodeAcceleratorUse {
  name: string;
  /** The extended resource its flavor counts (e.g. `nvidia.com/gpu`). */
  resourceName: string;
  total: number;
  /** Allocated to Quartermaster's admitted gangs, whether or not their pods are bound yet. */
  held: number;
  /** Held by other schedulers' pods (as the node sync counts them). */
  external: number;
}

/** Accelerators of these nodes: their total, what Quartermaster's allocations hold and what others' pods hold. */
export async function nodeUsage(db: SqlHandle, names: readonly string[]): Promise<NodeAcceleratorUse[]> {
  const { rows } = await db.pool.query<{ name: string; resource_name: string; total: number; held: number; external: number }>(
    `SELECT n.name, f.resource_name, n.accelerators AS total, n.external_accelerators AS external,
            COALESCE((SELECT sum(a.accelerators) FROM allocations a WHERE a.node = n.name), 0)::int AS held
     FROM nodes n JOIN flavors f ON f.name = n.flavor WHERE n.name = ANY($1::text[])`,
    [names],
  );
  return rows.map((r) => ({ name: r.name, resourceName: r.resource_name, total: r.total, held: r.held, external: r.external }));
}
