/**
 * Checks that a pending job is something the core can reason about. A job that fails gets code
 * INVALID with the first problem found; the cycle never throws on a well-formed snapshot.
 */
import { isQuantity } from './amount.js';
import type { CycleState } from './cycle-state.js';
import type { PendingJob } from './model.js';
import { rolesProblem } from './roles.js';

const isCount = (n: unknown): n is number => isQuantity(n) && n >= 1;
const quantityReason = (field: string, v: unknown): string => `${field} must be a non-negative integer (got ${String(v)})`;

/** The first problem with `job`, or null when it is valid. */
export function invalidReason(st: CycleState, job: PendingJob): string | null {
  if (!st.teams.has(job.team)) return `unknown team ${job.team}`;
  if (!Array.isArray(job.flavors) || job.flavors.length === 0) return 'the job accepts no flavor';
  // Checked every cycle for every pending job: no allocation unless something is wrong.
  if (!job.flavors.every((f) => st.flavors.has(f))) {
    const unknown = job.flavors.filter((f) => !st.flavors.has(f));
    return `unknown flavor${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
  }
  if (!isCount(job.replicas)) return `replicas must be a positive integer (got ${String(job.replicas)})`;
  if (!isCount(job.minReplicas) || job.minReplicas > job.replicas) {
    return `minReplicas must be an integer between 1 and replicas ${job.replicas} (got ${String(job.minReplicas)})`;
  }
  if (!isQuantity(job.acceleratorsPerReplica)) return quantityReason('acceleratorsPerReplica', job.acceleratorsPerReplica);
  if (!isQuantity(job.cpuMillisPerReplica)) return quantityReason('cpuMillisPerReplica', job.cpuMillisPerReplica);
  if (!isQuantity(job.memoryMiBPerReplica)) return quantityReason('memoryMiBPerReplica', job.memoryMiBPerReplica);
  if (job.roles !== undefined) {
    const problem = rolesProblem(job.roles);
    if (problem !== null) return `${problem.field} ${problem.message}`;
  }
  if (!Number.isFinite(job.priority)) return `priority must be a finite number (got ${String(job.priority)})`;
  if (!Number.isFinite(job.submittedAt)) return `submittedAt must be a finite time (got ${String(job.submittedAt)})`;
  const rt = job.expectedRuntimeSeconds;
  if (rt !== null && !(typeof rt === 'number' && Number.isFinite(rt) && rt >= 0)) {
    return `expectedRuntimeSeconds must be null or a non-negative number (got ${String(rt)})`;
  }
  const level = job.topology?.level;
  if (level !== 'none' && level !== 'zone' && level !== 'block' && level !== 'domain') {
    return `unknown topology level ${String(level)}`;
  }
  const selector: unknown = job.topology.nodeSelector;
  if (selector !== undefined && (selector === null || typeof selector !== 'object' || Array.isArray(selector) || Object.values(selector).some((v) => typeof v !== 'string'))) {
    return 'nodeSelector must map label keys to string values';
  }
  return null;
}
