/**
 * Choosing preemption victims (pure: it tries victim sets on the cycle state and undoes them; the
 * caller commits). Only when `options.preemption` and only after every flavor failed without it.
 *
 * Who may be a victim of job J (team T) on flavor f:
 * - never a non-preemptible job, one admitted less than minRuntimeBeforePreemptionSeconds ago, one
 *   admitted in this very cycle, or one that itself preempted J (`RunningJob.preempted`); victims are
 *   whole gangs;
 * - within T, by T's `withinTeam` policy: LowerPriority → victim.priority < J.priority;
 *   LowerOrNewerEqualPriority → also equal priority when the victim was submitted later;
 * - in another team S of T's cohort, by T's `reclaimWithinCohort` policy (LowerPriority → lower
 *   priority; Any → any priority), only while S borrows f (used_S > nominal_S) and only if T stays
 *   within its own nominal after admitting J (reclaiming, never borrowing, by preemption).
 *
 * Candidates, cheapest first:
 *   1. lowest priority; 2. most recently admitted; 3. fewest accelerators; 4. id.
 * Victims are added in that order (skipping a cross-team candidate whose team stopped borrowing)
 * until J fits (quota AND node placement, respecting reservations); then every victim that is not
 * needed is put back, latest first. These rules exclude cycles: a within-team victim has lower (or
 * equal and newer) priority, so it can never preempt its preemptor back; a cross-team victim's team
 * borrows while the preemptor's team stays within nominal, so the preemptor is not reclaimable then —
 * and should later usage make it so, `RunningJob.preempted` still forbids the victim to strike back.
 */
import { replicasWithin } from './amount.js';
import { backfillLimits } from './backfill.js';
import { type CycleState, type Holding, victimBound } from './cycle-state.js';
import { shapeOf } from './fit.js';
import { type FreeView, type GangRequest, groupSlots, placeGang, placeInGroups, slotsAnywhere, slotsOn } from './gang-placer.js';
import type { NodeGroup } from './cluster-state.js';
import { groupingOf } from './topology.js';
import type { PendingJob, Preemption, PreemptionKind, ReclaimPolicy, WithinTeamPolicy } from './model.js';
import { maxAddable } from './quota.js';
import { jobLabel } from './reasons.js';

export interface PreemptionPlan {
  flavor: string;
  nodes: number[];
  victims: Holding[];
  preemptions: Preemption[];
}

export function withinTeamAllows(policy: WithinTeamPolicy, victim: Holding, job: PendingJob): boolean {
  switch (policy) {
    case 'Never':
      return false;
    case 'LowerPriority':
      return victim.job.priority < job.priority;
    case 'LowerOrNewerEqualPriority':
      return (
        victim.job.priority < job.priority ||
        (victim.job.priority === job.priority && victim.job.submittedAt > job.submittedAt)
      );
  }
}

export function reclaimAllows(policy: ReclaimPolicy, victim: Holding, job: PendingJob): boolean {
  switch (policy) {
    case 'Never':
      return false;
    case 'LowerPriority':
      return victim.job.priority < job.priority;
    case 'Any':
      return true;
  }
}

/**
 * Cheapest first: 1. lowest priority, 2. least work lost (accelerators × time since its last checkpoint,
 * or since admission for a job that does not checkpoint), 3. most recently admitted, 4. fewest
 * accelerators, 5. id.
 */
export function compareCandidates(x: Holding, y: Holding): number {
  return (
    x.job.priority - y.job.priority ||
    lostWork(x) - lostWork(y) ||
    y.admittedAt - x.admittedAt ||
    x.accelerators - y.accelerators ||
    (x.job.id < y.job.id ? -1 : x.job.id > y.job.id ? 1 : 0)
  );
}

/** Accelerator-ms a holding loses if preempted now (its checkpoint is never after the cycle's now). */
function lostWork(h: Holding): number {
  return h.accelerators * -h.checkpointAt;
}

function preemptible(st: CycleState, h: Holding, job: PendingJob): boolean {
  const minRuntimeMs = st.snapshot.options.minRuntimeBeforePreemptionSeconds * 1000;
  return (
    !h.removed &&
    !h.admittedThisCycle &&
    h.job.preemptible &&
    st.now - h.admittedAt >= minRuntimeMs &&
    !(h.preempted?.includes(job.id) ?? false)
  );
}

function isBorrowing(st: CycleState, team: string, flavor: string): boolean {
  const e = st.quota.get(team, flavor);
  return e !== undefined && e.used > e.nominal;
}

/**
 * Whether the eligible candidates could possibly free `capacityGap` accelerators and `quotaGap` of
 * quota (each victim frees at most its size of both). Consumes the sources; the caller rewinds them.
 */
function enoughCandidates(st: CycleState, job: PendingJob, sources: Source[], capacityGap: number, quotaGap: number): boolean {
  let sum = 0;
  const gap = Math.max(capacityGap, quotaGap);
  if (gap <= 0) return true;
  for (let src = nextSource(st, sources, job); src !== undefined; src = nextSource(st, sources, job)) {
    sum += src.list[src.next - 1]!.accelerators;
    if (sum >= gap) return true;
  }
  return false;
}

/**
 * Whether the job could be placed if every eligible candidate were released (an upper bound that
 * releases nothing): free capacity plus what the candidates hold, per node; reservations are ignored.
 * Consumes the sources; the caller rewinds them.
 */
function placeableWithAll(st: CycleState, job: PendingJob, sources: Source[], req: GangRequest): boolean {
  const freed = new Map<number, { a: number; c: number; m: number }>();
  const cl = st.cluster;
  const { a, c, m } = req.shape;
  const k = req.minK;
  /** Replica slots of node i with `f` released on it (cf. slotsOn). */
  const slotsWith = (i: number, f: { a: number; c: number; m: number } | undefined): number => {
    let s = k;
    if (a > 0) s = Math.min(s, Math.floor((cl.freeA(i) + (f?.a ?? 0)) / a));
    if (c > 0) s = Math.min(s, Math.floor((cl.freeC(i) + (f?.c ?? 0)) / c));
    if (m > 0) s = Math.min(s, Math.floor((cl.freeM(i) + (f?.m ?? 0)) / m));
    return Math.max(0, s);
  };
  const grouping = groupingOf(job.topology);
  const none = grouping === 'none';
  // Level none: count replica slots incrementally and stop as soon as there are enough.
  let slots = none ? slotsAnywhere(cl, req, k) : 0;
  for (let src = nextSource(st, sources, job); src !== undefined; src = nextSource(st, sources, job)) {
    for (const r of src.list[src.next - 1]!.replicas) {
      let f = freed.get(r.node);
      const node = cl.nodes[r.node]!;
      const counts = none && node.flavor === req.flavor && node.schedulable;
      const before = counts ? slotsWith(r.node, f) : 0;
      if (f === undefined) {
        f = { a: 0, c: 0, m: 0 };
        freed.set(r.node, f);
      }
      f.a += r.a;
      f.c += r.c;
      f.m += r.m;
      if (counts) slots += slotsWith(r.node, f) - before;
    }
    if (none && slots >= k) return true;
  }
  if (none) return slots >= k;
  const view: FreeView = {
    freeA: (i) => cl.freeA(i) + (freed.get(i)?.a ?? 0),
    freeC: (i) => cl.freeC(i) + (freed.get(i)?.c ?? 0),
    freeM: (i) => cl.freeM(i) + (freed.get(i)?.m ?? 0),
  };
  const groups = cl.groups(req.flavor, grouping);
  const extra = new Map<NodeGroup, number>();
  for (const [i, f] of freed) for (const g of cl.groupsOfNode(i, grouping)) extra.set(g, (extra.get(g) ?? 0) + f.a);
  return placeInGroups(view, groups, (g) => g.freeSum + (extra.get(g) ?? 0), { ...req, maxK: k, caps: undefined }).ok;
}

/** A sorted victim list of one team, consumed lazily in candidate order. */
interface Source {
  list: readonly Holding[];
  /** First entry not evicted for good. */
  start: number;
  next: number;
  /** Whether `next` already points at an eligible entry. */
  settled: boolean;
  /**
   * Accelerators this source may give: a borrowing team stops being a victim once it no longer
   * borrows, so at most its borrowed amount (the last victim may overshoot). Infinity for the own team.
   */
  budget: number;
  consumed: number;
  crossTeam: boolean;
  allows: (h: Holding) => boolean;
  /** For priority-bounded policies: the list (sorted by priority) is done once this is false. */
  stillEligible: (h: Holding) => boolean;
}

/** Moves `src.next` to its first eligible entry (or the end). */
function settle(st: CycleState, src: Source, job: PendingJob): void {
  while (src.next < src.list.length) {
    const h = src.list[src.next]!;
    if (!src.stillEligible(h)) {
      src.next = src.list.length;
      return;
    }
    if (preemptible(st, h, job) && src.allows(h)) return;
    src.next++;
  }
}

/** Advances the source holding the cheapest next candidate, without allocating: its `list[next - 1]` is the candidate. */
function nextSource(st: CycleState, sources: Source[], job: PendingJob): Source | undefined {
  let best: Source | undefined;
  for (const src of sources) {
    if (src.consumed >= src.budget) continue;
    if (!src.settled) {
      settle(st, src, job);
      src.settled = true;
    }
    const h = src.list[src.next];
    if (h !== undefined && (best === undefined || compareCandidates(h, best.list[best.next]!) < 0)) best = src;
  }
  if (best !== undefined) {
    best.consumed += best.list[best.next]!.accelerators;
    best.next++;
    best.settled = false;
  }
  return best;
}

/** The next candidate over all sources, cheapest first (a lazy k-way merge), with its source. */
function nextCandidate(st: CycleState, sources: Source[], job: PendingJob): { h: Holding; src: Source } | undefined {
  const src = nextSource(st, sources, job);
  return src && { h: src.list[src.next - 1]!, src };
}

function rewind(sources: Source[]): void {
  for (const src of sources) {
    src.next = src.start;
    src.settled = false;
    src.consumed = 0;
  }
}

/** Finds, and leaves applied on `st`, the cheapest sufficient victim set for `job` on `flavor`. */
export function planPreemption(st: CycleState, job: PendingJob, flavor: string): PreemptionPlan | undefined {
  const team = st.teams.get(job.team);
  const e = st.quota.get(job.team, flavor);
  const fl = st.cluster.flavor(flavor);
  if (team === undefined || e === undefined || e.implicit || fl === undefined) return undefined;
  const shape = shapeOf(job);
  const need = shape.a * job.minReplicas;
  // A failed attempt of the same team on the same flavor and grouping, at the same epoch, by a job
  // that had at least this one's candidates (higher priority, or equal and submitted no later) and
  // asked for no more (per-replica resources and replica count), means this one fails too.
  const memoKey = `${job.team}|${flavor}|${groupingOf(job.topology)}`;
  let memo = st.failedPreemptions.get(memoKey);
  if (memo === undefined || memo.epoch !== st.epoch(flavor)) {
    memo = { epoch: st.epoch(flavor), failed: [] };
    st.failedPreemptions.set(memoKey, memo);
  }
  for (const f of memo.failed) {
    if (
      shape.a >= f.a &&
      shape.c >= f.c &&
      shape.m >= f.m &&
      job.minReplicas >= f.minK &&
      (f.priority > job.priority || (f.priority === job.priority && f.submittedAt <= job.submittedAt))
    ) {
      return undefined;
    }
  }
  const remember = (): undefined => {
    const m = { epoch: st.epoch(flavor), failed: memo.epoch === st.epoch(flavor) ? memo.failed : [] };
    m.failed.push({ ...shape, minK: job.minReplicas, priority: job.priority, submittedAt: job.submittedAt });
    if (m.failed.length > 16) m.failed.shift();
    st.failedPreemptions.set(memoKey, m);
    return undefined;
  };

  // 1. Candidate sources: the own team, and teams of the cohort that borrow the flavor.
  const sources: Source[] = [];
  const within = team.preemption.withinTeam;
  // Upper bound of what the candidates could free (prefix sums over priority-sorted lists).
  let freeable = 0;
  if (within !== 'Never') {
    const v = st.victimsOf(job.team, flavor, compareCandidates);
    const below = within === 'LowerPriority' ? (p: number) => p < job.priority : (p: number) => p <= job.priority;
    freeable += victimBound(v, below);
    sources.push({
      list: v.list,
      start: v.start,
      next: v.start,
      settled: false,
      budget: Infinity,
      consumed: 0,
      crossTeam: false,
      allows: (h) => withinTeamAllows(within, h, job),
      stillEligible: (h) => below(h.job.priority),
    });
  }
  const reclaim = team.preemption.reclaimWithinCohort;
  if (team.cohort !== null && reclaim !== 'Never' && e.used + need <= e.nominal) {
    for (const other of st.quota.members(team.cohort, flavor)) {
      if (other.team === job.team || other.used <= other.nominal) continue;
      const v = st.victimsOf(other.team, flavor, compareCandidates);
      freeable += Math.min(victimBound(v, reclaim === 'Any' ? () => true : (p) => p < job.priority), other.used);
      sources.push({
        list: v.list,
        start: v.start,
        next: v.start,
        settled: false,
        budget: other.used - other.nominal,
        consumed: 0,
        crossTeam: true,
        allows: (h) => reclaimAllows(reclaim, h, job),
        stillEligible: reclaim === 'Any' ? () => true : (h) => h.job.priority < job.priority,
      });
    }
  }
  if (sources.length === 0) return undefined;
  // Fast bounds: even freeing every candidate leaves too few accelerators, or too little quota.
  if (fl.totalFree + freeable < need || maxAddable(e) + freeable < need) return remember();
  // Dry run: sum the eligible candidates (without releasing anything) until they could cover the job.
  if (!enoughCandidates(st, job, sources, need - fl.totalFree, need - maxAddable(e))) return remember();
  rewind(sources);
  const bound = { flavor, shape, minK: job.minReplicas, maxK: job.minReplicas, topology: job.topology };
  if (!placeableWithAll(st, job, sources, bound)) return remember();
  rewind(sources);

  // 2. Add victims, cheapest first, until the job fits. Placement is the expensive check, so it runs
  // only once quota and the flavor's free total allow the job; and for topology requests, once it has
  // failed, only the groups holding newly released nodes are re-examined (nothing else changed).
  const grouping = groupingOf(job.topology);
  const baseReq = { flavor, shape, minK: job.minReplicas, maxK: job.minReplicas, topology: job.topology };
  let knownFailure = false;
  /** Level none, after a failed check: an upper bound of replica slots (caps ignored), kept incrementally. */
  let noneBound = 0;
  let touched: Holding[] = [];
  /** Releases `h` and returns how many replica slots its flavor's schedulable nodes gained (no caps). */
  const slotGain = (h: Holding): number => {
    const nodes = [...new Set(h.replicas.map((r) => r.node))].filter((i) => {
      const n = st.cluster.nodes[i]!;
      return n.flavor === flavor && n.schedulable;
    });
    const before = nodes.map((i) => slotsOn(st.cluster, i, shape, job.minReplicas));
    st.release(h);
    return nodes.reduce((sum, i, j) => sum + slotsOn(st.cluster, i, shape, job.minReplicas) - before[j]!, 0);
  };
  let lastGood: NodeGroup | undefined;
  const cheapChecks = (victims: readonly Holding[]): ReturnType<typeof backfillLimits> | undefined => {
    if (fl.totalFree < need || maxAddable(e) < need) return undefined;
    if (e.used + need > e.nominal && victims.some((v) => v.job.team !== job.team)) return undefined;
    const limits = backfillLimits(st, job, flavor);
    if (limits.slack !== undefined && limits.slack.quotaSlack < need) return undefined;
    return limits;
  };
  const inGroup = (g: NodeGroup, caps: Map<number, number> | undefined): boolean =>
    g.freeSum >= need && groupSlots(st.cluster, g, { ...baseReq, caps }) >= job.minReplicas;
  const placementFits = (caps: Map<number, number> | undefined): boolean => {
    if (grouping === 'none') {
      if (knownFailure && noneBound < job.minReplicas) return false;
      const ok = placeGang(st.cluster, { ...baseReq, caps }).ok;
      if (!ok) {
        knownFailure = true;
        noneBound = slotsAnywhere(st.cluster, baseReq, job.minReplicas);
      }
      return ok;
    }
    if (lastGood !== undefined && inGroup(lastGood, caps)) return true;
    if (knownFailure) {
      const seen = new Set<NodeGroup>();
      for (const h of touched) {
        for (const rep of h.replicas) {
          for (const g of st.cluster.groupsOfNode(rep.node, grouping)) {
            if (seen.has(g)) continue;
            seen.add(g);
            if (inGroup(g, caps)) return (lastGood = g) !== undefined;
          }
        }
      }
      touched = [];
      return false;
    }
    const ok = placeGang(st.cluster, { ...baseReq, caps }).ok;
    if (!ok) {
      knownFailure = true;
      touched = [];
    }
    return ok;
  };
  const fits = (victims: readonly Holding[]): boolean => {
    const limits = cheapChecks(victims);
    return limits !== undefined && placementFits(limits.caps);
  };
  /** Nodes of a placement of the job on the current state (with the current caps), if it fits. */
  const currentPlacementNodes = (): Set<number> | undefined => {
    const limits = backfillLimits(st, job, flavor);
    const fit = placeGang(st.cluster, { ...baseReq, caps: limits.caps });
    return fit.ok ? new Set(fit.nodes) : undefined;
  };
  const epochBefore = st.epoch(flavor);
  const failuresBefore = st.cluster.savedFailures(flavor);
  const undo = (victims: Holding[]): void => {
    for (const v of [...victims].reverse()) st.hold(v);
    st.restoreEpoch(flavor, epochBefore);
    st.cluster.restoreFailures(flavor, failuresBefore);
  };
  const victims: Holding[] = [];
  let ok = false;
  for (let c = nextCandidate(st, sources, job); c !== undefined; c = nextCandidate(st, sources, job)) {
    if (c.src.crossTeam && !isBorrowing(st, c.h.job.team, flavor)) continue;
    if (grouping === 'none' && knownFailure) noneBound += slotGain(c.h);
    else st.release(c.h);
    victims.push(c.h);
    touched.push(c.h);
    if (fits(victims)) {
      ok = true;
      break;
    }
  }
  if (!ok) {
    undo(victims);
    return remember();
  }

  // 3. Walk back: put back every victim that is not needed, latest added first. A victim whose nodes
  // the current placement does not use, and whose quota is not needed, is put back without another
  // placement search (the placement stays valid); otherwise placement is checked in full.
  knownFailure = false;
  let used = currentPlacementNodes();
  for (let i = victims.length - 2; i >= 0; i--) {
    const v = victims[i]!;
    const rest = victims.filter((_, j) => j !== i);
    const offPlacement = used !== undefined && v.replicas.every((r) => !used!.has(r.node));
    st.hold(v);
    if (offPlacement && cheapChecks(rest) !== undefined) {
      victims.splice(i, 1);
    } else if (fits(rest)) {
      victims.splice(i, 1);
      used = currentPlacementNodes();
    } else {
      st.release(v);
    }
    knownFailure = false;
  }

  // 4. Place the job (largest elastic count the freed capacity allows). After a reclaim the team
  // must stay within its nominal, so an elastic gang grows no further than that.
  const limits = backfillLimits(st, job, flavor);
  let maxK = replicasWithin(maxAddable(e), shape.a, job.replicas);
  if (victims.some((v) => v.job.team !== job.team)) {
    maxK = Math.min(maxK, replicasWithin(Math.max(0, e.nominal - e.used), shape.a, job.replicas));
  }
  if (limits.slack !== undefined) maxK = Math.min(maxK, replicasWithin(Math.max(0, limits.slack.quotaSlack), shape.a, job.replicas));
  const req = { flavor, shape, minK: job.minReplicas, maxK: Math.max(maxK, job.minReplicas), topology: job.topology, caps: limits.caps };
  const fit = placeGang(st.cluster, req);
  if (!fit.ok) {
    undo(victims);
    return undefined;
  }
  for (const v of victims) st.evict(v);
  return { flavor, nodes: fit.nodes, victims, preemptions: victims.map((v) => explainPreemption(st, v, job, flavor)) };
}

function explainPreemption(st: CycleState, v: Holding, job: PendingJob, flavor: string): Preemption {
  const kind: PreemptionKind = v.job.team === job.team ? 'WithinTeam' : 'ReclaimWithinCohort';
  const cmp =
    v.job.priority < job.priority
      ? `priority ${job.priority} > ${v.job.priority}`
      : v.job.priority === job.priority
        ? `priority ${job.priority} = ${v.job.priority}, submitted earlier`
        : `priority ${job.priority} < ${v.job.priority}, reclaim policy Any`;
  const why =
    kind === 'WithinTeam'
      ? `to free ${v.accelerators} ${flavor} within team ${job.team}`
      : `to reclaim ${v.accelerators} ${flavor} lent to team ${v.job.team}`;
  const lostAcceleratorSeconds = (v.accelerators * Math.max(0, st.now - v.checkpointAt)) / 1000;
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
    gracePeriodSeconds: cp !== undefined && cp.gracePeriodSeconds > 0 && Number.isFinite(cp.gracePeriodSeconds) ? cp.gracePeriodSeconds : 0,
    message: `preempted by ${jobLabel(job)} (${cmp}) ${why}${lost}`,
  };
}
