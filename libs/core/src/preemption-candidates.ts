/**
 * Preemption, step 1: who may be a victim of a job, cheapest first (preemptor.ts runs the steps).
 *
 * Candidates come from sources — the job's own team, and each team of its cohort that borrows the
 * flavor — each a victim list sorted in candidate order (`compareCandidates`). Before anything is
 * released, `victimsCouldSuffice` asks whether even every candidate together could make room (merging the
 * sources lazily, a k-way merge that allocates nothing): most hopeless attempts stop there.
 * The victim-set search (victim-search.ts) then reads them in order of lost work.
 */
import { type CycleState, type Holding, type VictimList, lostWork, victimBound } from './cycle-state.js';
import type { FlavorNodes, NodeGroup } from './cluster-state.js';
import { type FreeView, type GangRequest, type ReplicaShape, placeInGroups, slotsAnywhere } from './gang-placer.js';
import { type GroupingKey, groupingOf } from './topology.js';
import type { PendingJob, ReclaimPolicy, Team, WithinTeamPolicy } from './model.js';
import { type QuotaEntry, maxAddableFor } from './quota.js';

/** What one preemption attempt is about: `job` of `team`, on `flavor`, at its minimum replica count. */
export interface PreemptionRequest {
  job: PendingJob;
  team: Team;
  flavor: string;
  /** The team's quota on the flavor. */
  quota: QuotaEntry;
  /** The flavor's nodes (live: `totalFree` follows releases). */
  nodes: FlavorNodes;
  shape: ReplicaShape;
  /** Accelerators of the gang at `minReplicas`. */
  need: number;
  grouping: GroupingKey;
  /** The gang at exactly `minReplicas`, without reservation caps. */
  gang: GangRequest;
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
 * Candidate order, cheapest first: 1. lowest priority, 2. least work lost at `now` (accelerators × time since
 * its last checkpoint, or since admission for a job that does not checkpoint: cycle-state.ts `lostWork`),
 * 3. most recently admitted, 4. fewest accelerators, 5. id.
 */
export function compareCandidates(x: Holding, y: Holding, now: number): number {
  return (
    x.job.priority - y.job.priority ||
    lostWork(x, now) - lostWork(y, now) ||
    y.admittedAt - x.admittedAt ||
    x.accelerators - y.accelerators ||
    (x.job.id < y.job.id ? -1 : x.job.id > y.job.id ? 1 : 0)
  );
}

/** No thrashing: a job preempted this recently is a victim again only for a job of higher priority. */
export const RECENT_PREEMPTION_SECONDS = 15 * 60;

/**
 * Whatever the policy: never a job already released or evicted, one admitted in this very cycle, a
 * non-preemptible one, one admitted less than minRuntimeBeforePreemptionSeconds ago, one that itself
 * preempted `job`, or one preempted less than max(minRuntimeBeforePreemptionSeconds,
 * RECENT_PREEMPTION_SECONDS) ago unless `job` has a higher priority.
 */
function preemptible(st: CycleState, h: Holding, job: PendingJob): boolean {
  const minRuntimeMs = st.snapshot.options.minRuntimeBeforePreemptionSeconds * 1000;
  return (
    !h.removed &&
    !h.admittedThisCycle &&
    h.job.preemptible &&
    st.now - h.admittedAt >= minRuntimeMs &&
    !(h.preempted?.includes(job.id) ?? false) &&
    !(recentlyPreempted(h, st.now, minRuntimeMs) && job.priority <= h.job.priority)
  );
}

function recentlyPreempted(h: Holding, now: number, minRuntimeMs: number): boolean {
  const at = h.lastPreemptedAt;
  return typeof at === 'number' && now - at < Math.max(minRuntimeMs, RECENT_PREEMPTION_SECONDS * 1000);
}

/** A sorted victim list of one team, consumed lazily in candidate order. */
export interface Source {
  /** The team's victim list (its `list`, with prefix sums of accelerators). */
  victims: VictimList;
  list: readonly Holding[];
  /** First entry not evicted for good. */
  start: number;
  next: number;
  /** Whether `next` already points at an eligible entry. */
  settled: boolean;
  /**
   * What a borrowing team borrows of the flavor: it stops being a victim once it no longer borrows, so all
   * of its victims but the largest fit within this (victim-search.ts). Infinity for the own team.
   */
  borrowed: number;
  crossTeam: boolean;
  allows: (h: Holding) => boolean;
  /** For priority-bounded policies: the list (sorted by priority) is done once this is false. */
  stillEligible: (h: Holding) => boolean;
}

export interface Candidates {
  sources: Source[];
  /** Upper bound of the accelerators every candidate together could free. */
  freeable: number;
}

/**
 * The sources of victims: the own team by its `withinTeam` policy; and, when the team reclaims
 * within its cohort and stays within its nominal after admitting the job, every other team of the
 * cohort that borrows the flavor, by the `reclaimWithinCohort` policy.
 */
export function candidateSources(st: CycleState, p: PreemptionRequest): Candidates {
  const { job, team, flavor, quota: e } = p;
  const sources: Source[] = [];
  const order = (x: Holding, y: Holding): number => compareCandidates(x, y, st.now);
  let freeable = 0;
  const within = team.preemption.withinTeam;
  if (within !== 'Never') {
    const v = st.victimsOf(job.team, flavor, order);
    const below = within === 'LowerPriority' ? (pr: number) => pr < job.priority : (pr: number) => pr <= job.priority;
    freeable += victimBound(v, below);
    sources.push({
      victims: v,
      list: v.list,
      start: v.start,
      next: v.start,
      settled: false,
      borrowed: Infinity,
      crossTeam: false,
      allows: (h) => withinTeamAllows(within, h, job),
      stillEligible: (h) => below(h.job.priority),
    });
  }
  const reclaim = team.preemption.reclaimWithinCohort;
  if (team.cohort !== null && reclaim !== 'Never' && e.used + p.need <= e.nominal) {
    for (const other of st.quota.members(team.cohort, flavor)) {
      if (other.team === job.team || other.used <= other.nominal) continue;
      const v = st.victimsOf(other.team, flavor, order);
      freeable += Math.min(victimBound(v, reclaim === 'Any' ? () => true : (pr) => pr < job.priority), other.used);
      sources.push({
        victims: v,
        list: v.list,
        start: v.start,
        next: v.start,
        settled: false,
        borrowed: other.used - other.nominal,
        crossTeam: true,
        allows: (h) => reclaimAllows(reclaim, h, job),
        stillEligible: reclaim === 'Any' ? () => true : (h) => h.job.priority < job.priority,
      });
    }
  }
  return { sources, freeable };
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
    if (!src.settled) {
      settle(st, src, job);
      src.settled = true;
    }
    const h = src.list[src.next];
    if (h !== undefined && (best === undefined || compareCandidates(h, best.list[best.next]!, st.now) < 0)) best = src;
  }
  if (best !== undefined) {
    best.next++;
    best.settled = false;
  }
  return best;
}

/** Whether `h`, an entry of `source`, may be a victim of `job` now (the policies and the rules above). */
export function eligible(st: CycleState, source: Source, h: Holding, job: PendingJob): boolean {
  return source.stillEligible(h) && preemptible(st, h, job) && source.allows(h);
}

/**
 * Every eligible candidate of `sources`, cheapest first, with its source (sources rewound before and after).
 * Eligibility is checked as each is reached, so a candidate released meanwhile is skipped.
 */
export function* eachCandidate(st: CycleState, sources: Source[], job: PendingJob): Generator<{ source: Source; victim: Holding }> {
  rewind(sources);
  try {
    for (let src = nextSource(st, sources, job); src !== undefined; src = nextSource(st, sources, job)) {
      yield { source: src, victim: src.list[src.next - 1]! };
    }
  } finally {
    rewind(sources);
  }
}

/** Starts every source over (after a dry run consumed them). */
function rewind(sources: Source[]): void {
  for (const src of sources) {
    src.next = src.start;
    src.settled = false;
  }
}

/**
 * Whether releasing every candidate could possibly let the job in, releasing nothing: cheap bounds
 * first (accelerators of the flavor and quota), then a sum over the eligible candidates, then a
 * placement on free capacity plus everything the candidates hold. Leaves the sources rewound.
 */
export function victimsCouldSuffice(st: CycleState, p: PreemptionRequest, c: Candidates): boolean {
  const { nodes: fl, quota: e, need } = p;
  const room = maxAddableFor(e, p.job.preemptible);
  if (fl.totalFree + c.freeable < need || room + c.freeable < need) return false;
  const enough = enoughCandidates(st, p.job, c.sources, need - fl.totalFree, need - room);
  rewind(c.sources);
  if (!enough) return false;
  const placeable = placeableWithAll(st, p.job, c.sources, p.gang);
  rewind(c.sources);
  return placeable;
}

/**
 * Whether the eligible candidates could possibly free `capacityGap` accelerators and `quotaGap` of
 * quota (each victim frees at most its size of both). Consumes the sources.
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
 * Consumes the sources.
 */
function placeableWithAll(st: CycleState, job: PendingJob, sources: Source[], req: GangRequest): boolean {
  const freed = new Map<number, ReplicaShape>();
  const cl = st.cluster;
  const { a, c, m } = req.shape;
  const k = req.minK;
  /** Replica slots of node i with `f` released on it (cf. slotsOn). */
  const slotsWith = (i: number, f: ReplicaShape | undefined): number => {
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
