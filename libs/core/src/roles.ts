/**
 * Multi-role gangs (Kueue's pod sets): a job made of roles, each with its own count, minimum and shape — a
 * CPU-only driver and 8-GPU workers, Ray actors of 2 GPUs and learners of 4, a leader with more memory than
 * its workers. Quota and admission charge each role its own shape; the rest of the core (estimates,
 * reservations, victim search) works on the job's envelope (JobSpec: sums of counts, largest shape), which
 * never asks for less than the roles do.
 *
 * Semantics (ADR 0024):
 * - one flavor per gang; the accelerator roles share one topology group (zone / block / domain / slice);
 * - a role without accelerators goes on nodes of that flavor that fit it (Quartermaster's nodes are its
 *   accelerator nodes), the gang's own nodes and the nodes with the fewest free accelerators first, never in
 *   the group constraint and never charged accelerators;
 * - elastic: every role at its full count, else every role at its minimum (two points, not a search).
 */
import type { JobRole, JobSpec } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB, ReplicaShape } from './quantity.js';

/** The job's roles: its own list when it has several, else one role from its per-replica fields. */
export function rolesOf(job: JobSpec): readonly JobRole[] {
  if (job.roles !== undefined && job.roles.length > 1) return job.roles;
  return [
    {
      name: job.roles?.[0]?.name ?? 'worker',
      replicas: job.replicas,
      minReplicas: job.minReplicas,
      acceleratorsPerReplica: job.acceleratorsPerReplica,
      cpuMillisPerReplica: job.cpuMillisPerReplica,
      memoryMiBPerReplica: job.memoryMiBPerReplica,
    },
  ];
}

/** Whether the job has roles of different shapes or counts to place one by one. */
export function isMultiRole(job: JobSpec): boolean {
  return job.roles !== undefined && job.roles.length > 1;
}

export function roleShape(role: JobRole): ReplicaShape {
  return { a: role.acceleratorsPerReplica, c: role.cpuMillisPerReplica, m: role.memoryMiBPerReplica };
}

/** Accelerators the gang holds with every role at its minimum (what it needs to start). */
export function minAccelerators(job: JobSpec): Accelerators {
  if (!isMultiRole(job)) return job.acceleratorsPerReplica * job.minReplicas;
  let sum = 0;
  for (const r of job.roles!) sum += r.acceleratorsPerReplica * r.minReplicas;
  return sum;
}

/** Accelerators the gang holds with every role at its full count. */
export function maxAccelerators(job: JobSpec): Accelerators {
  if (!isMultiRole(job)) return job.acceleratorsPerReplica * job.replicas;
  let sum = 0;
  for (const r of job.roles!) sum += r.acceleratorsPerReplica * r.replicas;
  return sum;
}

/** CPU and memory the gang's replicas hold at `counts` (one per role of rolesOf; its minimums when absent). */
export function cpuAndMemory(job: JobSpec, counts?: readonly number[]): { c: CpuMillis; m: MemoryMiB } {
  const roles = rolesOf(job);
  let c = 0;
  let m = 0;
  roles.forEach((r, i) => {
    const k = counts?.[i] ?? r.minReplicas;
    c += r.cpuMillisPerReplica * k;
    m += r.memoryMiBPerReplica * k;
  });
  return { c, m };
}

/**
 * The envelope of a job's roles, as the JobSpec fields carry it: replicas and minimum summed, the per-replica
 * figures the largest of any role. Used by the API to fill those fields for a job submitted with roles.
 */
export function envelopeOf(roles: readonly JobRole[]): Pick<
  JobSpec,
  'replicas' | 'minReplicas' | 'acceleratorsPerReplica' | 'cpuMillisPerReplica' | 'memoryMiBPerReplica'
> {
  let replicas = 0;
  let minReplicas = 0;
  let a = 0;
  let c = 0;
  let m = 0;
  for (const r of roles) {
    replicas += r.replicas;
    minReplicas += r.minReplicas;
    a = Math.max(a, r.acceleratorsPerReplica);
    c = Math.max(c, r.cpuMillisPerReplica);
    m = Math.max(m, r.memoryMiBPerReplica);
  }
  return { replicas, minReplicas, acceleratorsPerReplica: a, cpuMillisPerReplica: c, memoryMiBPerReplica: m };
}

/**
 * What victim search makes room for when a multi-role job preempts: its accelerator roles as one uniform gang
 * of their largest shape and summed minimum (its CPU-only roles are placed afterwards on what is left; when
 * they do not fit, the preemption is not made). A single-role job: its own shape and minimum.
 */
export function preemptionGang(job: JobSpec): { shape: ReplicaShape; minK: number } {
  const roles = rolesOf(job);
  const withAccelerators = roles.filter((r) => r.acceleratorsPerReplica > 0);
  const counted = withAccelerators.length > 0 ? withAccelerators : roles;
  const shape: ReplicaShape = { a: 0, c: 0, m: 0 };
  let minK = 0;
  for (const r of counted) {
    shape.a = Math.max(shape.a, r.acceleratorsPerReplica);
    shape.c = Math.max(shape.c, r.cpuMillisPerReplica);
    shape.m = Math.max(shape.m, r.memoryMiBPerReplica);
    minK += r.minReplicas;
  }
  return { shape, minK };
}

/** The problem with a job's roles, or null (validation.ts; the API names the field the same way). */
export function rolesProblem(roles: unknown): { field: string; message: string } | null {
  if (!Array.isArray(roles)) return { field: 'roles', message: 'must be a list' };
  if (roles.length === 0) return { field: 'roles', message: 'must hold at least one role' };
  const seen = new Set<string>();
  for (const [i, raw] of roles.entries()) {
    const at = `roles[${i}]`;
    const r = raw as Partial<JobRole> | null;
    if (r === null || typeof r !== 'object') return { field: at, message: 'must be an object' };
    if (typeof r.name !== 'string' || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(r.name))
      return { field: `${at}.name`, message: 'must be a DNS label' };
    if (seen.has(r.name)) return { field: `${at}.name`, message: `duplicates role ${r.name}` };
    seen.add(r.name);
    if (!Number.isSafeInteger(r.replicas) || r.replicas! < 1)
      return { field: `${at}.replicas`, message: 'must be a positive integer' };
    if (!Number.isSafeInteger(r.minReplicas) || r.minReplicas! < 1 || r.minReplicas! > r.replicas!)
      return { field: `${at}.minReplicas`, message: `must be an integer between 1 and replicas ${r.replicas}` };
    for (const field of ['acceleratorsPerReplica', 'cpuMillisPerReplica', 'memoryMiBPerReplica'] as const) {
      const v = r[field];
      if (!Number.isSafeInteger(v) || v! < 0) return { field: `${at}.${field}`, message: 'must be a non-negative integer' };
    }
  }
  return null;
}
