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
