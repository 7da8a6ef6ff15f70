/**
 * Preemption: a cheap necessary test of placement while victim sets are tried (victim-search.ts). It counts
 * the replicas of the job's shape that free capacity plus the holdings counted in (`add`) make room for, per
 * node group of the job's grouping (level none: one group of the flavor's schedulable nodes). A node's
 * accelerators are capped by the reservations it serves as they stand before any release (backfill.ts); a
 * release raises that cap by at most what it frees, so the count never says no where the full check
 * (preemption-fit.ts), which decides, could say yes.
 */
import type { NodeGroup } from './cluster-state.js';
import { backfillLimits } from './backfill.js';
import type { CycleState, Holding } from './cycle-state.js';
import { groupSlots, slotsAnywhere } from './gang-placer.js';
import type { PreemptionRequest } from './preemption-candidates.js';

/** Sentinel group of level `none`: every schedulable node of the flavor. */
const ANYWHERE: NodeGroup = { key: '', nodes: [], freeSum: 0 };
const IN_ANYWHERE: readonly NodeGroup[] = [ANYWHERE];
const IN_NONE: readonly NodeGroup[] = [];

export class SlotCount {
  private readonly k: number;
  private readonly caps: ReadonlyMap<number, number> | undefined;
  private readonly freed = new Map<number, { a: number; c: number; m: number }>();
  private readonly slots = new Map<NodeGroup, number>();
  private reached = 0;
  private baseReached: boolean | undefined;

  constructor(
    private readonly st: CycleState,
    private readonly p: PreemptionRequest,
  ) {
    this.k = p.gang.minK;
    this.caps = backfillLimits(st, p.job, p.flavor).caps;
    // Build the grouping (and so the nodes' memberships) before asking nodes for their groups.
    if (p.grouping !== 'none') st.cluster.groups(p.flavor, p.grouping);
  }

  /** The most free accelerators of one group (level none: the flavor's). */
  bestFree(): number {
    if (this.p.grouping === 'none') return this.p.nodes.totalFree;
    let best = 0;
    for (const g of this.st.cluster.groups(this.p.flavor, this.p.grouping)) best = Math.max(best, g.freeSum);
    return best;
  }

  /** Accelerators of `h` on nodes the job can use. */
  usable(h: Holding): number {
    let sum = 0;
    for (const r of h.replicas) if (this.groupsOf(r.node).length > 0) sum += r.a;
    return sum;
  }

  /** Whether `h` holds anything (CPU or memory too) on a node the job can use. */
  touches(h: Holding): boolean {
    return h.replicas.some((r) => this.groupsOf(r.node).length > 0);
  }

  /** Whether some group holds the job's replicas with what is counted in released. */
  enough(): boolean {
    return this.reached > 0 || this.base();
  }

  add(h: Holding): void {
    this.change(h, 1);
  }

  remove(h: Holding): void {
    this.change(h, -1);
  }

  /** The groups of the job's grouping node `i` belongs to (none when the job cannot use it). */
  groupsOf(i: number): readonly NodeGroup[] {
    const cl = this.st.cluster;
    if (this.p.grouping !== 'none') return cl.groupsOfNode(i, this.p.grouping);
    const n = cl.nodes[i]!;
    return n.flavor === this.p.flavor && n.schedulable ? IN_ANYWHERE : IN_NONE;
  }

  /** Replica slots of group `g` with what is counted in released. */
  slotsOf(g: NodeGroup): number {
    let s = this.slots.get(g);
    if (s === undefined) {
      const req = { ...this.p.gang, maxK: this.k, caps: this.caps };
      s = g === ANYWHERE ? slotsAnywhere(this.st.cluster, req, this.k) : groupSlots(this.st.cluster, g, req);
      this.slots.set(g, s);
      if (s >= this.k) this.reached++;
    }
    return s;
  }

  /** Replica slots on node `i` with what is counted in released (at most the replica count). */
  slotsAt(i: number): number {
    const cl = this.st.cluster;
    const f = this.freed.get(i);
    const { a, c, m } = this.p.shape;
    let s = this.k;
    const cap = this.caps?.get(i);
    const freeA = cap === undefined ? cl.freeA(i) : Math.min(cl.freeA(i), cap);
    if (a > 0) s = Math.min(s, Math.floor((freeA + (f?.a ?? 0)) / a));
    if (c > 0) s = Math.min(s, Math.floor((cl.freeC(i) + (f?.c ?? 0)) / c));
    if (m > 0) s = Math.min(s, Math.floor((cl.freeM(i) + (f?.m ?? 0)) / m));
    return Math.max(0, s);
  }

  private change(h: Holding, sign: 1 | -1): void {
    for (const r of h.replicas) {
      const groups = this.groupsOf(r.node);
      if (groups.length === 0) continue;
      const before = this.slotsAt(r.node);
      let f = this.freed.get(r.node);
      if (f === undefined) {
        f = { a: 0, c: 0, m: 0 };
        this.freed.set(r.node, f);
      }
      f.a += sign * r.a;
      f.c += sign * r.c;
      f.m += sign * r.m;
      const d = this.slotsAt(r.node) - before;
      if (d === 0) continue;
      for (const g of groups) {
        const old = this.slotsOf(g);
        const now = old + d;
        this.slots.set(g, now);
        if (old < this.k && now >= this.k) this.reached++;
        else if (old >= this.k && now < this.k) this.reached--;
      }
    }
  }

  /** Whether a group holds the gang's replicas with nothing released (then only the full check tells). */
  private base(): boolean {
    if (this.baseReached === undefined) {
      const req = { ...this.p.gang, maxK: this.k, caps: this.caps };
      const cl = this.st.cluster;
      this.baseReached =
        this.p.grouping === 'none'
          ? slotsAnywhere(cl, req, this.k) >= this.k
          : cl.groups(this.p.flavor, this.p.grouping).some((g) => g.freeSum >= this.p.need && groupSlots(cl, g, req) >= this.k);
    }
    return this.baseReached;
  }
}
