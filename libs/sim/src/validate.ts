import type { ClusterSpec, Rejected, SimJob, TenancySpec } from './types.js';

/**
 * Binds trace jobs to a cluster and tenancy before the simulation starts. A job is rejected (with the
 * line it came from and the reason) when its team is unknown, none of its flavors exists, its team has
 * no quota for any of them, or its gang can never fit: no flavor has enough nodes that each hold a
 * whole replica. Flavors unknown to the cluster are dropped from a job that accepts others.
 */
export function bindJobs(jobs: SimJob[], cluster: ClusterSpec, tenancy: TenancySpec): { jobs: SimJob[]; rejected: Rejected[] } {
  const teams = new Set(tenancy.teams.map((t) => t.name));
  const flavors = new Set(cluster.flavors.map((f) => f.name));
  const quotaKeys = new Set(tenancy.quotas.map((q) => `${q.team}\u0000${q.flavor}`));
  const nodesByFlavor = new Map<string, number[]>();
  for (const node of cluster.nodes) {
    if (!node.schedulable) continue;
    const list = nodesByFlavor.get(node.flavor) ?? [];
    list.push(node.accelerators);
    nodesByFlavor.set(node.flavor, list);
  }
  const out: SimJob[] = [];
  const rejected: Rejected[] = [];
  for (const job of jobs) {
    const reject = (reason: string): void => {
      rejected.push({ line: job.line, source: job.source, reason });
    };
    if (!teams.has(job.team)) {
      reject(`unknown team '${job.team}' (not in the tenancy)`);
      continue;
    }
    const known = job.flavors.filter((f) => flavors.has(f));
    if (known.length === 0) {
      reject(`unknown flavor ${job.flavors.map((f) => `'${f}'`).join(', ')} (cluster has ${[...flavors].join(', ')})`);
      continue;
    }
    const withQuota = known.filter((f) => quotaKeys.has(`${job.team}\u0000${f}`));
    if (withQuota.length === 0) {
      reject(`team '${job.team}' has no quota for ${known.join(', ')}`);
      continue;
    }
    const fitting = withQuota.filter((f) => replicaSlots(nodesByFlavor.get(f) ?? [], job.acceleratorsPerReplica) >= job.replicas);
    if (fitting.length === 0) {
      const total = job.replicas * job.acceleratorsPerReplica;
      const sizes = withQuota.map((f) => {
        const nodes = nodesByFlavor.get(f) ?? [];
        return `${f}: ${nodes.reduce((a, b) => a + b, 0)} accelerators, room for ${replicaSlots(nodes, job.acceleratorsPerReplica)} replicas`;
      });
      reject(`gang of ${job.replicas} × ${job.acceleratorsPerReplica} = ${total} accelerators is larger than the cluster (${sizes.join('; ')})`);
      continue;
    }
    out.push(fitting.length === job.flavors.length ? job : { ...job, flavors: fitting });
  }
  return { jobs: out, rejected };
}

/** How many replicas of `perReplica` accelerators the nodes can hold at once. */
function replicaSlots(nodes: number[], perReplica: number): number {
  let slots = 0;
  for (const n of nodes) slots += Math.floor(n / perReplica);
  return slots;
}

/**
 * Maps a gang of N accelerators to replicas: N ≤ 8 → one replica of N; N > 8 → replicas of 8 when 8
 * divides N, otherwise replicas of the largest divisor of N that is ≤ 8 (12 → 2 × 6, 20 → 4 × 5).
 */
export function gangShape(accelerators: number): { replicas: number; acceleratorsPerReplica: number } {
  if (accelerators <= 8) return { replicas: 1, acceleratorsPerReplica: accelerators };
  for (let per = 8; per >= 1; per--) {
    if (accelerators % per === 0) return { replicas: accelerators / per, acceleratorsPerReplica: per };
  }
  return { replicas: accelerators, acceleratorsPerReplica: 1 };
}
