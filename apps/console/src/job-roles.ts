import type { JobDetail } from './types';

/** One row of a multi-role job's Roles table: the role as asked, what was admitted, where it runs. */
export interface RoleRow {
  name: string;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  cpuMillisPerReplica: number;
  memoryMiBPerReplica: number;
  /** Replicas admitted; null while the job has not been admitted (or was never). */
  admitted: number | null;
  /** Nodes its replicas hold now, in order of first replica; empty without an allocation. */
  nodes: string[];
}

/**
 * The roles of a multi-role gang (ADR 0024) with their admitted counts and nodes; null for a job of one role.
 *
 * Admitted per role, in order:
 * 1. while the job holds an allocation, its replicas of that role (each allocation names its role);
 * 2. else, for a job admitted once (admittedReplicas set, not pending), the ADR's two points: every role at its
 *    full count when admittedReplicas is their sum, every role at its minimum when it is the sum of minimums;
 * 3. else unknown (null).
 */
export function roleRows(
  job: Pick<JobDetail, 'roles' | 'allocation' | 'admittedReplicas' | 'state'>,
): RoleRow[] | null {
  if (job.roles === null || job.roles.length === 0) return null;
  const held = new Map<string, { count: number; nodes: string[] }>();
  for (const a of [...job.allocation].sort((x, y) => x.replica - y.replica)) {
    if (a.role === null) continue;
    const r = held.get(a.role) ?? { count: 0, nodes: [] };
    r.count += 1;
    if (!r.nodes.includes(a.node)) r.nodes.push(a.node);
    held.set(a.role, r);
  }
  const sum = (f: (r: NonNullable<JobDetail['roles']>[number]) => number): number =>
    job.roles!.reduce((s, r) => s + f(r), 0);
  const admittedOnce = job.admittedReplicas !== null && job.state !== 'PENDING';
  const atFull = admittedOnce && job.admittedReplicas === sum((r) => r.replicas);
  const atMin = admittedOnce && !atFull && job.admittedReplicas === sum((r) => r.minReplicas);
  return job.roles.map((r) => ({
    name: r.name,
    replicas: r.replicas,
    minReplicas: r.minReplicas,
    acceleratorsPerReplica: r.acceleratorsPerReplica,
    cpuMillisPerReplica: r.cpuMillisPerReplica,
    memoryMiBPerReplica: r.memoryMiBPerReplica,
    admitted:
      job.allocation.length > 0
        ? (held.get(r.name)?.count ?? 0)
        : atFull
          ? r.replicas
          : atMin
            ? r.minReplicas
            : null,
    nodes: held.get(r.name)?.nodes ?? [],
  }));
}

/**
 * Accelerators a job holds as admitted: its replicas times its accelerators per replica, or for a multi-role
 * gang each role's own (at its full count, or at its minimum when the admission was the sum of minimums).
 */
export function admittedAccelerators(job: {
  roles: { replicas: number; minReplicas: number; acceleratorsPerReplica: number }[] | null;
  admittedReplicas: number | null;
  replicas: number;
  acceleratorsPerReplica: number;
}): number {
  const replicas = job.admittedReplicas ?? job.replicas;
  if (job.roles === null || job.roles.length === 0) return replicas * job.acceleratorsPerReplica;
  const atMin = replicas === job.roles.reduce((s, r) => s + r.minReplicas, 0) && replicas !== job.roles.reduce((s, r) => s + r.replicas, 0);
  return job.roles.reduce((s, r) => s + (atMin ? r.minReplicas : r.replicas) * r.acceleratorsPerReplica, 0);
}
