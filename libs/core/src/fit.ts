/**
 * Whether a job starts now on one flavor, without preemption: quota first (cheap), then the
 * reservations it must not delay, then node placement. Returns the largest replica count (elastic
 * gangs) that fits all three, or why it does not.
 */
import { replicasWithin } from './amount.js';
import { backfillLimits } from './backfill.js';
import type { CycleState } from './cycle-state.js';
import { type GangFit, type GangRequest, type ReplicaShape, placeGang } from './gang-placer.js';
import type { PendingJob } from './model.js';
import type { Accelerators } from './quantity.js';
import { type QuotaEntry, capExceeded, capNeverMet, maxAddable, maxAddableFor, quotaCeiling, quotaCeilingFor, replicasWithinCaps } from './quota.js';
import { type RoleFit, placeRoles } from './role-placer.js';
import { cpuAndMemory, isMultiRole, maxAccelerators, minAccelerators, rolesOf } from './roles.js';
import { groupingLabelsHint, groupingOf, splitGrouping } from './topology.js';
import {
  type FlavorFailure,
  capacityMessage,
  capCeilingMessage,
  capQuotaMessage,
  ceilingMessage,
  fleetMessage,
  groupTooSmallMessage,
  noQuotaMessage,
  nonPreemptibleCeilingMessage,
  nonPreemptibleQuotaMessage,
  selectorMessage,
  quotaMessage,
  reservationBlockMessage,
  roleCapacityMessage,
} from './reasons.js';

/** `roleOf`: for a multi-role gang, the index of each replica's role (rolesOf), replicas in role order. */
export type FitOutcome = { ok: true; flavor: string; nodes: number[]; roleOf?: number[] } | { ok: false; failure: FlavorFailure };

export function shapeOf(job: PendingJob): ReplicaShape {
  return { a: job.acceleratorsPerReplica, c: job.cpuMillisPerReplica, m: job.memoryMiBPerReplica };
}

const fail = (flavor: string, code: FlavorFailure['code'], message: string): FitOutcome => ({
  ok: false,
  failure: { flavor, code, message },
});

/** Static checks: the job can never fit this flavor (quota ceiling or fleet too small). */
export function neverFits(st: CycleState, job: PendingJob, flavor: string): FitOutcome | undefined {
  const e = st.quota.get(job.team, flavor);
  if (e === undefined || e.implicit) return fail(flavor, 'NO_QUOTA', noQuotaMessage(job.team, flavor));
  const a = job.acceleratorsPerReplica;
  const need = minAccelerators(job);
  const ceiling = quotaCeilingFor(e, job.preemptible);
  if (need > ceiling) {
    // A job that may not be preempted never borrows: its team's nominal is its ceiling.
    if (need <= quotaCeiling(e)) return fail(flavor, 'UNSATISFIABLE', nonPreemptibleCeilingMessage(e, need));
    return fail(flavor, 'UNSATISFIABLE', ceilingMessage(e, need, ceiling));
  }
  const least = cpuAndMemory(job);
  const capped = capNeverMet(e, least.c, least.m);
  if (capped !== undefined) return fail(flavor, 'UNSATISFIABLE', capCeilingMessage(e, capped, capped === 'cpu' ? least.c : least.m));
  const fl = st.cluster.flavor(flavor)!;
  if (a > fl.maxAllocatable || need > fl.totalAllocatable) {
    const unit = isMultiRole(job) ? rolesOf(job).find((r) => r.acceleratorsPerReplica === a)! : { minReplicas: job.minReplicas };
    return fail(flavor, 'UNSATISFIABLE', fleetMessage(flavor, unit.minReplicas, a, fl.maxAllocatable, fl.totalAllocatable));
  }
  const grouping = groupingOf(job.topology);
  if (grouping !== 'none') {
    const { base, selector } = splitGrouping(grouping);
    if (selector.length > 0) {
      // Its node selector: the matching nodes (one group under level none) must hold the gang.
      const matching = st.cluster.largestGroup(flavor, base === 'none' ? grouping : groupingOf({ level: 'none', nodeSelector: job.topology.nodeSelector }));
      if (need > matching) return fail(flavor, 'UNSATISFIABLE', selectorMessage(flavor, need, selector, matching));
    }
  }
  if (grouping !== 'none' && splitGrouping(grouping).base !== 'none') {
    const largest = st.cluster.largestGroup(flavor, grouping);
    if (need > largest) {
      const hint = groupingLabelsHint(grouping, st.flavors.get(flavor)?.topologyLabels);
      return fail(flavor, 'UNSATISFIABLE', groupTooSmallMessage(flavor, need, grouping, largest, hint));
    }
  }
  return undefined;
}

/** Quota, reservations and placement for `job` on `flavor`, now. Does not change the state. */
export function tryFlavor(st: CycleState, job: PendingJob, flavor: string): FitOutcome {
  const never = neverFits(st, job, flavor);
  if (never !== undefined) return never;
  const e = st.quota.get(job.team, flavor)!;
  if (isMultiRole(job)) return tryRoles(st, job, flavor, e);
  const shape = shapeOf(job);
  const minK = job.minReplicas;

  // 1. Quota now.
  const kq = replicasWithin(maxAddableFor(e, job.preemptible), shape.a, job.replicas);
  if (kq < minK) {
    if (!job.preemptible && replicasWithin(maxAddable(e), shape.a, job.replicas) >= minK) {
      return fail(flavor, 'QUOTA_EXCEEDED', nonPreemptibleQuotaMessage(e, shape.a * minK));
    }
    const v = st.quota.check(job.team, flavor, shape.a * minK);
    const code = v.ok ? 'QUOTA_EXCEEDED' : v.code === 'NO_QUOTA' ? 'QUOTA_EXCEEDED' : v.code;
    return fail(flavor, code, quotaMessage(code, e, shape.a * minK));
  }
  // CPU and memory caps: a cap of their own, never borrowed.
  const kc = replicasWithinCaps(e, shape.c, shape.m, kq);
  if (kc < minK) return capFailure(flavor, e, shape.c * minK, shape.m * minK);

  // 2. Reservations of earlier jobs it must not delay.
  const limits = backfillLimits(st, job, flavor);
  let maxK = kc;
  if (limits.slack !== undefined) {
    const slack: Accelerators = Math.max(0, limits.slack.quotaSlack);
    maxK = Math.min(maxK, replicasWithin(slack, shape.a, job.replicas));
    if (maxK < minK) return blocked(job, flavor, limits.slack);
  }

  // 3. Nodes.
  const req: GangRequest = { flavor, shape, minK, maxK, topology: job.topology, caps: limits.caps };
  const fit = placeGang(st.cluster, req);
  if (fit.ok) return { ok: true, flavor, nodes: fit.nodes };
  if (limits.caps !== undefined) {
    const free = placeGang(st.cluster, { ...req, caps: undefined });
    if (free.ok) return blocked(job, flavor, limits.firstOverlapping!);
    return capacityFailure(st, job, flavor, free);
  }
  return capacityFailure(st, job, flavor, fit);
}

/**
 * A multi-role gang (roles.ts): quota for the accelerators of every role, then the reservations it must not
 * delay, then each role on nodes (role-placer.ts) — every role at its full count when quota and nodes allow,
 * else every role at its minimum.
 */
function tryRoles(st: CycleState, job: PendingJob, flavor: string, e: QuotaEntry): FitOutcome {
  const roles = rolesOf(job);
  const need = minAccelerators(job);
  let allowance = maxAddableFor(e, job.preemptible);
  if (need > allowance) {
    if (!job.preemptible && need <= maxAddable(e)) return fail(flavor, 'QUOTA_EXCEEDED', nonPreemptibleQuotaMessage(e, need));
    const v = st.quota.check(job.team, flavor, need);
    const code = v.ok ? 'QUOTA_EXCEEDED' : v.code === 'NO_QUOTA' ? 'QUOTA_EXCEEDED' : v.code;
    return fail(flavor, code, quotaMessage(code, e, need));
  }
  const atLeast = cpuAndMemory(job);
  if (capExceeded(e, atLeast.c, atLeast.m) !== undefined) return capFailure(flavor, e, atLeast.c, atLeast.m);
  const limits = backfillLimits(st, job, flavor);
  if (limits.slack !== undefined) {
    const slack: Accelerators = Math.max(0, limits.slack.quotaSlack);
    if (slack < need) return blocked(job, flavor, limits.slack);
    allowance = Math.min(allowance, slack);
  }
  const full = roles.map((r) => r.replicas);
  const least = roles.map((r) => r.minReplicas);
  const tries: number[][] = [];
  if (maxAccelerators(job) <= allowance && withinCaps(e, job, full)) tries.push(full);
  if (least.some((k, i) => k !== full[i])) tries.push(least);
  let fit: RoleFit | undefined;
  for (const counts of tries) {
    fit = placeRoles(st.cluster, job, flavor, counts, limits.caps);
    if (fit.ok) return { ok: true, flavor, nodes: fit.nodes, roleOf: fit.roleOf };
  }
  if (limits.caps !== undefined && placeRoles(st.cluster, job, flavor, least).ok) return blocked(job, flavor, limits.firstOverlapping!);
  const failed = fit as RoleFit & { ok: false };
  const fl = st.cluster.flavor(flavor)!;
  const grouped = splitGrouping(failed.fit.grouping).base !== 'none' && failed.role.acceleratorsPerReplica > 0;
  const code = grouped && failed.short === 'accelerators' && need <= fl.totalFree ? 'TOPOLOGY_UNSATISFIABLE' : 'INSUFFICIENT_CAPACITY';
  return fail(flavor, code, roleCapacityMessage(flavor, failed, fl.totalFree));
}

/** Whether the gang at `counts` stays within its team's CPU and memory caps on `e`'s flavor. */
export function withinCaps(e: QuotaEntry, job: PendingJob, counts: readonly number[]): boolean {
  const { c, m } = cpuAndMemory(job, counts);
  return capExceeded(e, c, m) === undefined;
}

/** The team's CPU or memory cap leaves too little for `c` and `m` now. */
function capFailure(flavor: string, e: QuotaEntry, c: number, m: number): FitOutcome {
  const r = capExceeded(e, c, m) ?? 'cpu';
  return fail(flavor, 'QUOTA_EXCEEDED', capQuotaMessage(e, r, r === 'cpu' ? c : m));
}

function blocked(job: PendingJob, flavor: string, r: { job: PendingJob; startAt: number }): FitOutcome {
  return fail(flavor, 'BLOCKED_BY_RESERVATION', reservationBlockMessage(job, r.job, flavor, r.startAt));
}

function capacityFailure(st: CycleState, job: PendingJob, flavor: string, fit: GangFit): FitOutcome {
  if (fit.ok) throw new Error('capacityFailure called with a fit');
  const fl = st.cluster.flavor(flavor)!;
  const code =
    splitGrouping(fit.grouping).base === 'none' || minAccelerators(job) > fl.totalFree
      ? 'INSUFFICIENT_CAPACITY'
      : 'TOPOLOGY_UNSATISFIABLE';
  const hint = groupingLabelsHint(fit.grouping, st.flavors.get(flavor)?.topologyLabels);
  return fail(flavor, code, capacityMessage(flavor, job.minReplicas, job.acceleratorsPerReplica, fit, fl.totalFree, hint));
}
