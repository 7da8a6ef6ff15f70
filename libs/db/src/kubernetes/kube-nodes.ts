import type { ClusterNode } from '#core';
import type { SqlHandle } from '../scheduling/sql-handle.js';

/** Writes Kubernetes Nodes as `nodes` rows (source `kubernetes`), one statement for the whole set. */
export async function upsertKubeNodes(db: SqlHandle, nodes: readonly ClusterNode[]): Promise<void> {
  const col = <T>(f: (n: ClusterNode) => T): T[] => nodes.map(f);
  await db.pool.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone, block, domain, tpu_shape, schedulable, source,
                        external_accelerators, external_cpu_millis, external_memory_mib, labels, updated_at)
     SELECT n.name, n.flavor, n.acc, n.cpu, n.mem, n.zone, n.block, n.domain, n.tpu, n.sched, 'kubernetes', n.xacc, n.xcpu, n.xmem, n.labels::jsonb, now()
     FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[],
                 $11::int[], $12::int[], $13::int[], $14::text[]) AS n(name, flavor, acc, cpu, mem, zone, block, domain, tpu, sched, xacc, xcpu, xmem, labels)
     ON CONFLICT (name) DO UPDATE SET flavor = EXCLUDED.flavor, accelerators = EXCLUDED.accelerators, cpu_millis = EXCLUDED.cpu_millis,
       memory_mib = EXCLUDED.memory_mib, zone = EXCLUDED.zone, block = EXCLUDED.block, domain = EXCLUDED.domain,
       tpu_shape = EXCLUDED.tpu_shape, schedulable = EXCLUDED.schedulable, source = 'kubernetes',
       external_accelerators = EXCLUDED.external_accelerators, external_cpu_millis = EXCLUDED.external_cpu_millis,
       external_memory_mib = EXCLUDED.external_memory_mib, labels = EXCLUDED.labels, updated_at = now()`,
    [
      col((n) => n.name),
      col((n) => n.flavor),
      col((n) => n.accelerators),
      col((n) => n.cpuMillis),
      col((n) => n.memoryMiB),
      col((n) => n.topology.zone ?? null),
      col((n) => n.topology.block ?? null),
      col((n) => n.topology.domain ?? null),
      col((n) => n.topology.tpuShape ?? null),
      col((n) => n.schedulable),
      col((n) => n.external?.accelerators ?? 0),
      col((n) => n.external?.cpuMillis ?? 0),
      col((n) => n.external?.memoryMiB ?? 0),
      col((n) => JSON.stringify(n.labels ?? {})),
    ],
  );
}

/** Kubernetes-sourced rows whose Node is gone: deleted, or made unschedulable while allocations name them. */
export async function removeMissingKubeNodes(db: SqlHandle, present: readonly string[]): Promise<number> {
  const deleted = await db.pool.query(
    `DELETE FROM nodes n WHERE n.source = 'kubernetes' AND NOT (n.name = ANY($1::text[]))
       AND NOT EXISTS (SELECT 1 FROM allocations a WHERE a.node = n.name)`,
    [present],
  );
  const fenced = await db.pool.query(
    `UPDATE nodes SET schedulable = false, updated_at = now() WHERE source = 'kubernetes' AND schedulable AND NOT (name = ANY($1::text[]))`,
    [present],
  );
  return (deleted.rowCount ?? 0) + (fenced.rowCount ?? 0);
}

/** A job holding accelerators on Nodes that left the cluster. */
export interface JobOnDepartedNode {
  jobId: string;
  /** Its allocation's nodes that are not among the present ones (sorted). */
  nodes: string[];
  /** An imported foreign gang (annotated pods Quartermaster did not make): its pods are not ours to re-create. */
  foreign: boolean;
}

/**
 * Jobs that hold (ADMITTED, BINDING, RUNNING) an allocation on a Kubernetes-sourced node that is not among
 * `present`: the node's row is kept, unschedulable, while they do, and nothing else releases them when the
 * pods never come back (a controller's re-created pod pinned to the departed node).
 */
export async function jobsOnDepartedNodes(db: SqlHandle, present: readonly string[]): Promise<JobOnDepartedNode[]> {
  const { rows } = await db.pool.query<{ job_id: string; nodes: string[]; foreign: boolean }>(
    `SELECT a.job_id::text AS job_id, array_agg(DISTINCT a.node ORDER BY a.node) AS nodes, bool_or(j.template ? 'importedFrom') AS foreign
     FROM allocations a JOIN nodes n ON n.name = a.node JOIN jobs j ON j.id = a.job_id
     WHERE n.source = 'kubernetes' AND NOT (n.name = ANY($1::text[])) AND j.state IN ('ADMITTED', 'BINDING', 'RUNNING')
     GROUP BY a.job_id ORDER BY a.job_id`,
    [present],
  );
  return rows.map((r) => ({ jobId: r.job_id, nodes: r.nodes, foreign: r.foreign }));
}
