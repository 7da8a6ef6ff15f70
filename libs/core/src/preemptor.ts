/**
 * Choosing preemption victims (pure: it tries victim sets on the cycle state and undoes them; the
 * caller commits). Only when `options.preemption` and only after every flavor failed without it.
 *
 * Who may be a victim of job J (team T) on flavor f (preemption-candidates.ts):
 * - never a non-preemptible job, one admitted less than minRuntimeBeforePreemptionSeconds ago, one
 *   admitted in this very cycle, one that itself preempted J (`RunningJob.preempted`), or one preempted
 *   less than max(that minimum runtime, 15 min) ago unless J's priority is higher (no thrashing); victims
 *   are whole gangs;
 * - within T, by T's `withinTeam` policy: LowerPriority → victim.priority < J.priority;
 *   LowerOrNewerEqualPriority → also equal priority when the victim was submitted later;
 * - in another team S of T's cohort, by T's `reclaimWithinCohort` policy (LowerPriority → lower
 *   priority; Any → any priority), only while S borrows f (used_S > nominal_S) and only if T stays
 *   within its own nominal after admitting J (reclaiming, never borrowing, by preemption).
 *
 * Which of them (victim-search.ts): the sufficient set of the lowest priorities, without a gang of more
 * than twice the shortfall when it can, that loses the least work, then frees the fewest accelerators.
 * These rules exclude cycles: a within-team victim has lower (or equal and newer) priority, so it can
 * never preempt its preemptor back; a cross-team victim's team borrows while the preemptor's team stays
 * within nominal, so the preemptor is not reclaimable then — and should later usage make it so,
 * `RunningJob.preempted` still forbids the victim to strike back.
 */
import { replicasWithin, subAmount } from './amount.js';
import { backfillLimits } from './backfill.js';
import { type CycleState, type Holding, lostWork } from './cycle-state.js';
import { shapeOf, withinCaps } from './fit.js';
import { placeGang } from './gang-placer.js';
import type { PendingJob, Preemption, PreemptionKind } from './model.js';
import type { Accelerators } from './quantity.js';
import { type Candidates, type PreemptionRequest, candidateSources, eachCandidate, victimsCouldSuffice } from './preemption-candidates.js';
import { VictimFit } from './preemption-fit.js';
import { maxAddableFor, replicasWithinCaps } from './quota.js';
import { jobSeenBy } from './reasons.js';
import { cheapestVictimSet } from './victim-search.js';
import { groupingOf } from './topology.js';
import { placeRoles } from './role-placer.js';
import { isMultiRole, maxAccelerators, minAccelerators, preemptionGang, rolesOf } from './roles.js';

export { RECENT_PREEMPTION_SECONDS, compareCandidates, reclaimAllows, withinTeamAllows } from './preemption-candidates.js';

export interface PreemptionPlan {
  flavor: string;
  nodes: number[];
  /** Multi-role gangs: each replica's role index (rolesOf). */
  roleOf?: number[];
  victims: Holding[];
  preemptions: Preemption[];
}

/**
 * Finds, and leaves applied on `st`, the cheapest sufficient victim set for `job` on `flavor`:
 *
 *   0. skip an attempt that an earlier failure in this cycle proves hopeless (`FailedAttempts`);
 *   1. gather the candidates, and stop if even all of them together could not make room
 *      (preemption-candidates.ts);
 *   2. find the cheapest set with which the job fits, and release it (victim-search.ts);
 *   3. when that search stopped at its budget, put back every victim the job does not need (`putBackUnneeded`);
 *   4. place the job on what the victims left (`placePreemptor`), evict them and explain each.
 *
 * On failure every release is undone (`st` is as before) and the failure remembered.
 */
export function planPreemption(st: CycleState, job: PendingJob, flavor: string): PreemptionPlan | undefined {
  const p = preemptionRequest(st, job, flavor);
  if (p === undefined) return undefined;
  const failed = new FailedAttempts(st, p);
  if (failed.covers(job)) return undefined;

  const candidates = candidateSources(st, p);
  if (candidates.sources.length === 0) return undefined;
  // A multi-role gang whose envelope cannot be made room for may still fit role by role (roles of different sizes).
  const byRoles = (): PreemptionPlan | undefined => (isMultiRole(job) ? victimsRoleByRole(st, p, candidates) : undefined);
  if (!victimsCouldSuffice(st, p, candidates)) return byRoles() ?? failed.remember();

  const undo = undoPoint(st, flavor);
  const fit = new VictimFit(st, p);
  const chosen = cheapestVictimSet(st, p, candidates.sources, fit);
  if (chosen === undefined) {
    undo([]);
    return byRoles() ?? failed.remember();
  }
  const victims = chosen.victims;
  if (!chosen.exact) putBackUnneeded(st, victims, fit);
  // The search made room for a multi-role gang's envelope: keep only the victims its roles really need.
  if (isMultiRole(job)) putBackUnneededByRoles(st, p, victims);

  const placed = placePreemptor(st, p, victims);
  if (placed === undefined) {
    undo(victims);
    return byRoles();
  }
  return evictFor(st, p, victims, placed);
}

/** Evicts `victims` for good and describes the plan. */
function evictFor(st: CycleState, p: PreemptionRequest, victims: Holding[], placed: { nodes: number[]; roleOf?: number[] }): PreemptionPlan {
  const { job, flavor } = p;
  const lent = lentBy(st, victims, job, flavor);
  for (const v of victims) st.evict(v);
  return { flavor, ...placed, victims, preemptions: victims.map((v) => explainPreemption(st, v, job, flavor, lent.get(v))) };
}

/** Candidates a role-by-role attempt reads at most: a bound on its cost (each may be followed by a placement). */
const ROLE_BY_ROLE_CANDIDATES = 256;

/**
 * The fallback for a multi-role gang whose envelope (one uniform gang of its largest shape) no victim set makes
 * room for — a learner of 8 and actors of 1 on two 8-GPU nodes are 5 × 8 as an envelope: releases candidates
 * cheapest first (a borrowing team's only while it still borrows) until the roles, placed one by one, fit; then
 * puts back every victim they do not need. A sufficient and minimal set, not always the cheapest one.
 */
function victimsRoleByRole(st: CycleState, p: PreemptionRequest, c: Candidates): PreemptionPlan | undefined {
  const { job, flavor } = p;
  const undo = undoPoint(st, flavor);
  const victims: Holding[] = [];
  const limits = backfillLimits(st, job, flavor);
  let read = 0;
  for (const { source, victim } of eachCandidate(st, c.sources, job)) {
    if (++read > ROLE_BY_ROLE_CANDIDATES) break;
    const lender = source.crossTeam ? st.quota.get(victim.job.team, flavor) : undefined;
    if (lender !== undefined && lender.used <= lender.nominal) continue;
    st.release(victim);
    victims.push(victim);
    if (p.nodes.totalFree < p.need || placeRolesAfter(st, p, victims, limits.caps) === undefined) continue;
    putBackUnneededByRoles(st, p, victims);
    const placed = placePreemptor(st, p, victims);
    if (placed !== undefined) return evictFor(st, p, victims, placed);
    break;
  }
  undo(victims);
  return undefined;
}

/** The attempt's request, or undefined when the team, its quota on the flavor, or the flavor is unknown. */
function preemptionRequest(st: CycleState, job: PendingJob, flavor: string): PreemptionRequest | undefined {
  const team = st.teams.get(job.team);
  const quota = st.quota.get(job.team, flavor);
  const nodes = st.cluster.flavor(flavor);
  if (team === undefined || quota === undefined || quota.implicit || nodes === undefined) return undefined;
  // A multi-role gang makes room for its accelerator roles as one uniform gang of their largest shape (roles.ts).
  const { shape, minK } = isMultiRole(job) ? preemptionGang(job) : { shape: shapeOf(job), minK: job.minReplicas };
  return {
    job,
    team,
    flavor,
    quota,
    nodes,
    shape,
    need: minAccelerators(job),
    grouping: groupingOf(job.topology),
    gang: { flavor, shape, minK, maxK: minK, topology: job.topology },
  };
}

/**
 * Failed attempts of a team on a flavor and grouping, kept while the flavor's epoch (its capacity and
 * holdings) is unchanged. One that had at least this job's candidates (higher priority, or equal and
 * submitted no later) and asked for no more (per-replica resources and replica count) means this
 * one fails too. The 16 latest are kept.
 */
class FailedAttempts {
  private readonly key: string;
  private readonly memo: { epoch: number; failed: { a: number; c: number; m: number; minK: number; priority: number; submittedAt: number }[] };

  constructor(
    private readonly st: CycleState,
    private readonly p: PreemptionRequest,
  ) {
    this.key = st.joinedKey(p.job.team, p.flavor, p.grouping);
    let memo = st.failedPreemptions.get(this.key);
    if (memo === undefined || memo.epoch !== st.epoch(p.flavor)) {
      memo = { epoch: st.epoch(p.flavor), failed: [] };
      st.failedPreemptions.set(this.key, memo);
    }
    this.memo = memo;
  }

  covers(job: PendingJob): boolean {
    const shape = this.p.shape;
    for (const f of this.memo.failed) {
      if (
        shape.a >= f.a &&
        shape.c >= f.c &&
        shape.m >= f.m &&
        this.p.gang.minK >= f.minK &&
        (f.priority > job.priority || (f.priority === job.priority && f.submittedAt <= job.submittedAt))
      ) {
        return true;
      }
    }
    return false;
  }

  remember(): undefined {
    const { st, p } = this;
    const epoch = st.epoch(p.flavor);
    const m = { epoch, failed: this.memo.epoch === epoch ? this.memo.failed : [] };
    m.failed.push({ a: p.shape.a, c: p.shape.c, m: p.shape.m, minK: p.gang.minK, priority: p.job.priority, submittedAt: p.job.submittedAt });
    if (m.failed.length > 16) m.failed.shift();
    st.failedPreemptions.set(this.key, m);
    return undefined;
  }
}

/** Takes `victims` back (latest released first) and restores the flavor's epoch and placement-failure cache. */
function undoPoint(st: CycleState, flavor: string): (victims: readonly Holding[]) => void {
  const epochBefore = st.epoch(flavor);
  const failuresBefore = st.cluster.savedFailures(flavor);
  return (victims) => {
    for (const v of [...victims].reverse()) st.hold(v);
    st.restoreEpoch(flavor, epochBefore);
    st.cluster.restoreFailures(flavor, failuresBefore);
  };
}

/**
 * Step 3: puts back every victim the job does not need, the one losing most work first. A victim whose
 * nodes the current placement does not use, and whose quota is not needed, is put back without another
 * placement search (the placement stays valid); otherwise placement is checked in full. Removes the ones
 * put back from `victims`.
 */
function putBackUnneeded(st: CycleState, victims: Holding[], fit: VictimFit): void {
  let used = fit.placementNodes();
  const costliest = [...victims].sort((x, y) => lostWork(y, st.now) - lostWork(x, st.now));
  for (const v of costliest) {
    const rest = victims.filter((x) => x !== v);
    const offPlacement = used !== undefined && v.replicas.every((r) => !used!.has(r.node));
    st.hold(v);
    if (offPlacement && fit.cheapLimits(rest) !== undefined) {
      victims.splice(victims.indexOf(v), 1);
    } else if (fit.fits(rest)) {
      victims.splice(victims.indexOf(v), 1);
      used = fit.placementNodes();
    } else {
      st.release(v);
    }
  }
}

/**
 * Step 3 for a multi-role gang: the victim set was chosen for its envelope (its accelerator roles as one uniform
 * gang), which may ask for more than its roles do. Puts back every victim its roles, placed one by one, do not
 * need — the one losing most work first.
 */
function putBackUnneededByRoles(st: CycleState, p: PreemptionRequest, victims: Holding[]): void {
  const limits = backfillLimits(st, p.job, p.flavor);
  for (const v of [...victims].sort((x, y) => lostWork(y, st.now) - lostWork(x, st.now))) {
    st.hold(v);
    const rest = victims.filter((x) => x !== v);
    if (placeRolesAfter(st, p, rest, limits.caps) !== undefined) victims.splice(victims.indexOf(v), 1);
    else st.release(v);
  }
}

/**
 * Step 4: the job's nodes on what the victims left, at the largest elastic count quota and the
 * reservations allow. After a reclaim the team must stay within its nominal, so an elastic gang grows
 * no further than that.
 */
function placePreemptor(st: CycleState, p: PreemptionRequest, victims: readonly Holding[]): { nodes: number[]; roleOf?: number[] } | undefined {
  const { job, flavor, shape, quota: e } = p;
  const limits = backfillLimits(st, job, flavor);
  if (isMultiRole(job)) return placeRolesAfter(st, p, victims, limits.caps);
  let maxK = replicasWithinCaps(e, shape.c, shape.m, replicasWithin(maxAddableFor(e, job.preemptible), shape.a, job.replicas));
  // Nothing is preempted for CPU or memory caps: the job must be within them on what the victims leave.
  if (maxK < job.minReplicas) return undefined;
  if (victims.some((v) => v.job.team !== job.team)) {
    maxK = Math.min(maxK, replicasWithin(subAmount(e.nominal, e.used), shape.a, job.replicas));
  }
  if (limits.slack !== undefined) {
    const slack: Accelerators = Math.max(0, limits.slack.quotaSlack);
    maxK = Math.min(maxK, replicasWithin(slack, shape.a, job.replicas));
  }
  const req = { flavor, shape, minK: job.minReplicas, maxK: Math.max(maxK, job.minReplicas), topology: job.topology, caps: limits.caps };
  const fit = placeGang(st.cluster, req);
  return fit.ok ? { nodes: fit.nodes } : undefined;
}

/**
 * A multi-role gang on what the victims left: every role at its full count when its team's quota allows it
 * (after a reclaim, within its nominal), else every role at its minimum — which the victims made room for,
 * unless its roles without accelerators find no room, and then there is no preemption.
 */
function placeRolesAfter(st: CycleState, p: PreemptionRequest, victims: readonly Holding[], caps: ReadonlyMap<number, number> | undefined): { nodes: number[]; roleOf: number[] } | undefined {
  const { job, flavor, quota: e } = p;
  let allowance = maxAddableFor(e, job.preemptible);
  if (victims.some((v) => v.job.team !== job.team)) allowance = Math.min(allowance, subAmount(e.nominal, e.used));
  if (minAccelerators(job) > allowance) return undefined;
  const roles = rolesOf(job);
  const full = roles.map((r) => r.replicas);
  const least = roles.map((r) => r.minReplicas);
  const tries = (maxAccelerators(job) <= allowance ? [full, least] : [least]).filter((counts) => withinCaps(e, job, counts));
  for (const counts of tries) {
    const fit = placeRoles(st.cluster, job, flavor, counts, caps);
    if (fit.ok) return { nodes: fit.nodes, roleOf: fit.roleOf };
  }
  return undefined;
}

/**
 * Per cross-team victim, the accelerators of it that its team borrowed: each borrowing team's victims take
 * from what it borrowed before the preemption, smallest first (all but its largest fit within it).
 */
function lentBy(st: CycleState, victims: readonly Holding[], job: PendingJob, flavor: string): Map<Holding, number> {
  const byTeam = new Map<string, Holding[]>();
  for (const v of victims) {
    if (v.job.team === job.team) continue;
    const list = byTeam.get(v.job.team) ?? [];
    list.push(v);
    byTeam.set(v.job.team, list);
  }
  const lent = new Map<Holding, number>();
  for (const [team, list] of byTeam) {
    const e = st.quota.get(team, flavor);
    // The victims are released already: what the team borrowed before is its usage now plus theirs.
    let left = e === undefined ? 0 : Math.max(0, e.used + list.reduce((sum, v) => sum + v.accelerators, 0) - e.nominal);
    for (const v of [...list].sort((x, y) => x.accelerators - y.accelerators)) {
      const x = Math.min(v.accelerators, left);
      lent.set(v, x);
      left -= x;
    }
  }
  return lent;
}

function explainPreemption(st: CycleState, v: Holding, job: PendingJob, flavor: string, lent: number | undefined): Preemption {
  const kind: PreemptionKind = v.job.team === job.team ? 'WithinTeam' : 'ReclaimWithinCohort';
  const [jp, vp] = [job.priority, v.job.priority];
  const cmp =
    vp < jp
      ? `priority ${jp} > ${vp}`
      : kind === 'WithinTeam'
        ? `equal priority ${jp}, and this job was submitted later`
        : `priority ${jp} ${jp === vp ? '=' : '<'} ${vp}, reclaim policy Any`;
  const held = lent !== undefined && lent < v.accelerators ? ` (of the ${v.accelerators} it held)` : '';
  const why =
    kind === 'WithinTeam'
      ? `to free ${v.accelerators} ${flavor} within team ${job.team}`
      : `to reclaim ${lent ?? v.accelerators} ${flavor} lent to team ${v.job.team}${held}`;
  const lostAcceleratorSeconds = lostWork(v, st.now) / 1000;
  const cp = v.job.checkpoint;
  const lost =
    cp === undefined
      ? ''
      : `; loses ${(lostAcceleratorSeconds / 3600).toFixed(1)} accelerator-hours since its checkpoint at ${new Date(v.checkpointAt).toISOString()}`;
  return {
    victimJobId: v.job.id,
    victimTeam: v.job.team,
    preemptorJobId: job.id,
    kind,
    lostAcceleratorSeconds,
    lostSince: Math.min(v.checkpointAt, st.now),
    gracePeriodSeconds: cp !== undefined && cp.gracePeriodSeconds > 0 && Number.isFinite(cp.gracePeriodSeconds) ? cp.gracePeriodSeconds : 0,
    message: `preempted by ${jobSeenBy(job, v.job.team)} (${cmp}) ${why}${lost}`,
  };
}
