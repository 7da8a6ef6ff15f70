/**
 * Gang placement at node level. All replicas go to nodes of one flavor, never over any node's free
 * accelerators / CPU / memory; only schedulable nodes are offered. With a topology requirement the
 * whole gang stays inside one group (zone / block / domain / TPU slice).
 *
 * Best fit: among groups that can hold the gang, the one with the least free accelerators left over;
 * inside it, the tightest nodes first (fewest free accelerators), so whole nodes stay free for large
 * gangs. Elastic gangs (minK < maxK) get the largest count that fits, then the least leftover.
 */
import type { ClusterState, NodeGroup } from './cluster-state.js';
import type { TopologyRequirement } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB, ReplicaShape } from './quantity.js';
import { type GroupingKey, groupingOf } from './topology.js';

export type { ReplicaShape } from './quantity.js';

export interface GangRequest {
  flavor: string;
  shape: ReplicaShape;
  minK: number;
  maxK: number;
  topology: TopologyRequirement;
  /** Per-node ceilings on accelerators (reservations protect these nodes); absent = free capacity. */
  caps?: ReadonlyMap<number, number>;
}

export type GangFit =
  | { ok: true; nodes: number[] }
  | {
      ok: false;
      grouping: GroupingKey;
      /** Most replicas that fit (in the best group for topology requests). */
      best: number;
      /** Schedulable nodes (of the best group) with room for one replica. */
      nodesWithRoom: number;
      /** Number of groups of that grouping among the flavor's schedulable nodes. */
      groups: number;
    };

/** What the placer reads: free capacity per node index. The live ClusterState is one; reservations use another. */
export interface FreeView {
  freeA(i: number): Accelerators;
  freeC(i: number): CpuMillis;
  freeM(i: number): MemoryMiB;
}

export function shapeKey(req: GangRequest): string {
  return `${groupingOf(req.topology)}|${req.shape.a}|${req.shape.c}|${req.shape.m}`;
}

/** Replicas of `shape` node `i` can take under `view` (and its cap), at most `maxK`. */
export function slotsOn(view: FreeView, i: number, shape: ReplicaShape, maxK: number, cap?: number): number {
  let s = maxK;
  const fa = cap === undefined ? view.freeA(i) : Math.min(view.freeA(i), cap);
  if (shape.a > 0) s = Math.min(s, Math.floor(fa / shape.a));
  if (shape.c > 0) s = Math.min(s, Math.floor(view.freeC(i) / shape.c));
  if (shape.m > 0) s = Math.min(s, Math.floor(view.freeM(i) / shape.m));
  return Math.max(0, s);
}

interface Picked {
  picks: number[];
  total: number;
  nodesWithRoom: number;
}

function expand(picks: number[], counts: number[]): number[] {
  const out: number[] = [];
  picks.forEach((n, j) => {
    for (let r = 0; r < counts[j]!; r++) out.push(n);
  });
  return out;
}

/** Tightest nodes first among `nodes`, until maxK replicas. */
function takeTightest(view: FreeView, nodes: readonly number[], req: GangRequest): Picked & { counts: number[] } {
  const withRoom: { i: number; s: number; f: number }[] = [];
  for (const i of nodes) {
    const s = slotsOn(view, i, req.shape, req.maxK, req.caps?.get(i));
    if (s > 0) withRoom.push({ i, s, f: view.freeA(i) });
  }
  withRoom.sort((x, y) => x.f - y.f || x.i - y.i);
  const picks: number[] = [];
  const counts: number[] = [];
  let total = 0;
  for (const w of withRoom) {
    if (total >= req.maxK) break;
    const take = Math.min(w.s, req.maxK - total);
    picks.push(w.i);
    counts.push(take);
    total += take;
  }
  return { picks, counts, total, nodesWithRoom: withRoom.length };
}

/** Replicas a group can hold, stopping early at maxK. */
export function groupSlots(view: FreeView, g: NodeGroup, req: GangRequest): number {
  let total = 0;
  for (const i of g.nodes) {
    total += slotsOn(view, i, req.shape, req.maxK, req.caps?.get(i));
    if (total >= req.maxK) return req.maxK;
  }
  return total;
}

/**
 * Chooses the group for a topology request (best fit), then the nodes inside it.
 * `freeSum(g)` must be an upper bound of the group's free accelerators under `view`.
 */
export function placeInGroups(
  view: FreeView,
  groups: readonly NodeGroup[],
  freeSum: (g: NodeGroup) => number,
  req: GangRequest,
): GangFit {
  const a = req.shape.a;
  const need = a * req.minK;
  const sums = new Map<NodeGroup, number>();
  const candidates: NodeGroup[] = [];
  for (const g of groups) {
    const sum = freeSum(g);
    sums.set(g, sum);
    if (sum >= need) candidates.push(g);
  }
  const sumOf = (g: NodeGroup): number => sums.get(g)!;
  let best = 0;
  let chosen: NodeGroup | undefined;
  if (req.minK === req.maxK) {
    if (candidates.length > 1) {
      candidates.sort((x, y) => sumOf(x) - sumOf(y) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    }
    for (const g of candidates) {
      const s = groupSlots(view, g, req);
      if (s >= req.maxK) {
        chosen = g;
        break;
      }
      best = Math.max(best, s);
    }
  } else {
    let bestLeft = Infinity;
    for (const g of candidates) {
      const s = groupSlots(view, g, req);
      const left = sumOf(g) - s * a;
      if (s > best || (s === best && s >= req.minK && left < bestLeft)) {
        best = s;
        bestLeft = left;
        if (s >= req.minK) chosen = g;
      }
    }
  }
  if (chosen === undefined) {
    if (candidates.length === 0 && a > 0) {
      for (const g of groups) best = Math.max(best, Math.floor(sumOf(g) / a));
      best = Math.min(best, req.minK - 1);
    }
    return { ok: false, grouping: groupingOf(req.topology), best, nodesWithRoom: 0, groups: groups.length };
  }
  const t = takeTightest(view, chosen.nodes, req);
  return { ok: true, nodes: expand(t.picks, t.counts) };
}

/** Level `none` on the live state: walk the free-accelerator buckets upward from the replica size. */
function placeAnywhere(state: ClusterState, req: GangRequest): GangFit {
  const fl = state.flavor(req.flavor)!;
  const picks: number[] = [];
  const counts: number[] = [];
  let total = 0;
  let nodesWithRoom = 0;
  const from = Math.min(req.shape.a, fl.buckets.length);
  outer: for (let b = from; b < fl.buckets.length; b++) {
    for (const i of fl.buckets[b]!) {
      const s = slotsOn(state, i, req.shape, req.maxK, req.caps?.get(i));
      if (s === 0) continue;
      nodesWithRoom++;
      const take = Math.min(s, req.maxK - total);
      picks.push(i);
      counts.push(take);
      total += take;
      if (total >= req.maxK) break outer;
    }
  }
  if (total < req.minK) return { ok: false, grouping: 'none', best: total, nodesWithRoom, groups: 1 };
  return { ok: true, nodes: expand(picks, counts) };
}

/** Replicas of `req` the flavor's schedulable nodes can hold now (level none, under its caps), counting up to `limit`. */
export function slotsAnywhere(state: ClusterState, req: GangRequest, limit: number): number {
  const fl = state.flavor(req.flavor);
  if (fl === undefined) return 0;
  let total = 0;
  for (let b = Math.min(req.shape.a, fl.buckets.length); b < fl.buckets.length; b++) {
    for (const i of fl.buckets[b]!) {
      total += slotsOn(state, i, req.shape, limit, req.caps?.get(i));
      if (total >= limit) return total;
    }
  }
  return total;
}

/** Places a gang on the live state (does not consume: the caller applies the result). */
export function placeGang(state: ClusterState, req: GangRequest): GangFit {
  const fl = state.flavor(req.flavor);
  const grouping = groupingOf(req.topology);
  if (fl === undefined) return { ok: false, grouping, best: 0, nodesWithRoom: 0, groups: 0 };
  const unconstrained = req.caps === undefined || req.caps.size === 0;
  const key = shapeKey(req);
  // A failure without caps implies a failure with caps (caps only lower capacity).
  const prev = state.failedShape(req.flavor, key);
  if (prev !== undefined && prev.minK <= req.minK) return prev.detail as GangFit;
  // The scans below are bounded: buckets below the replica size and groups whose free sum cannot hold
  // the gang are never visited.
  const fit =
    grouping === 'none'
      ? placeAnywhere(state, req)
      : placeInGroups(state, state.groups(req.flavor, grouping), (g) => g.freeSum, req);
  if (!fit.ok && unconstrained) state.rememberFailure(req.flavor, key, req.minK, fit);
  return fit;
}
