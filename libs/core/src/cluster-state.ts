/**
 * Free capacity of every node during one cycle, indexed for fast gang placement:
 * - per flavor, schedulable nodes bucketed by free accelerators (bucket b holds nodes with b free),
 *   so a search for "a replica of k accelerators" starts at bucket k and never scans fuller-than-needed;
 * - per flavor and topology grouping, the groups' free-accelerator sums (built lazily on first use);
 * - per flavor, the smallest replica count of each request shape that already failed this cycle.
 *   Admissions only consume capacity, so a failed shape keeps failing; any release (preemption)
 *   clears the flavor's memo.
 * free = allocatable − placements of running/admitted work − external use. It may go negative for a
 * node that a stale snapshot over-commits; such a node simply has no room.
 */
import { isQuantity } from './amount.js';
import type { ClusterNode, Flavor } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB, ReplicaShape } from './quantity.js';
import { type GroupingKey, groupOfNode } from './topology.js';

/** A capacity figure as a quantity: anything but a non-negative safe integer counts as 0. */
const q = (n: number | undefined): number => (isQuantity(n) ? n : 0);

export interface NodeGroup {
  /** The grouping it belongs to (`block`, `tpu:2x4`, …); empty for ad-hoc groups. */
  grouping?: GroupingKey;
  key: string;
  /** Node indexes, ascending (= by name). */
  nodes: number[];
  freeSum: Accelerators;
}

export interface FlavorNodes {
  name: string;
  /** Schedulable node indexes, ascending. */
  nodes: number[];
  /** buckets[b] = schedulable nodes with exactly b free accelerators (negative counts in bucket 0). */
  buckets: Set<number>[];
  /** Σ max(0, free accelerators) over schedulable nodes. */
  totalFree: Accelerators;
  /** Largest allocatable of a schedulable node, and their sum. */
  maxAllocatable: Accelerators;
  totalAllocatable: Accelerators;
  /** Allocatable of all nodes of the flavor, schedulable or not (the fleet, for fair share). */
  fleetCapacity: Accelerators;
}

export interface FailedShape {
  minK: number;
  detail: unknown;
}

export class ClusterState {
  readonly index = new Map<string, number>();
  private readonly fa: Accelerators[];
  private readonly fc: CpuMillis[];
  private readonly fm: MemoryMiB[];
  private sealed = false;
  private readonly flavors = new Map<string, FlavorNodes>();
  private readonly groupings = new Map<string, NodeGroup[]>();
  /** Per node index, the groups it belongs to (undefined until a grouping holding it is built). */
  private readonly memberships: (NodeGroup[] | undefined)[];
  private readonly failed = new Map<string, Map<string, FailedShape>>();
  private readonly largest = new Map<string, number>();

  /** `nodes` must be sorted by name. Nodes of unknown flavors are kept but never offered. */
  constructor(
    readonly nodes: readonly ClusterNode[],
    flavors: readonly Flavor[],
  ) {
    for (const f of flavors) {
      this.flavors.set(f.name, {
        name: f.name,
        nodes: [],
        buckets: [],
        totalFree: 0,
        maxAllocatable: 0,
        totalAllocatable: 0,
        fleetCapacity: 0,
      });
    }
    // A malformed figure (negative, fractional, NaN) counts as zero capacity rather than throwing.
    this.fa = nodes.map((n) => q(n.accelerators) - q(n.external?.accelerators));
    this.fc = nodes.map((n) => q(n.cpuMillis) - q(n.external?.cpuMillis));
    this.fm = nodes.map((n) => q(n.memoryMiB) - q(n.external?.memoryMiB));
    this.memberships = new Array<NodeGroup[] | undefined>(nodes.length);
    nodes.forEach((n, i) => {
      this.index.set(n.name, i);
      const fl = this.flavors.get(n.flavor);
      if (fl === undefined) return;
      fl.fleetCapacity += q(n.accelerators);
      if (!n.schedulable) return;
      fl.nodes.push(i);
      fl.maxAllocatable = Math.max(fl.maxAllocatable, q(n.accelerators));
      fl.totalAllocatable += q(n.accelerators);
    });
    for (const fl of this.flavors.values()) {
      fl.buckets = Array.from({ length: fl.maxAllocatable + 1 }, () => new Set<number>());
    }
  }

  /** Fills the buckets; call once after running work has been applied with `consume`. */
  seal(): void {
    for (const fl of this.flavors.values()) {
      for (const i of fl.nodes) {
        fl.buckets[this.bucketOf(fl, i)]!.add(i);
        fl.totalFree += Math.max(0, this.fa[i]!);
      }
    }
    this.sealed = true;
  }

  freeA(i: number): Accelerators {
    return this.fa[i]!;
  }
  freeC(i: number): CpuMillis {
    return this.fc[i]!;
  }
  freeM(i: number): MemoryMiB {
    return this.fm[i]!;
  }

  flavor(name: string): FlavorNodes | undefined {
    return this.flavors.get(name);
  }

  private bucketOf(fl: FlavorNodes, i: number): number {
    return Math.min(fl.maxAllocatable, Math.max(0, this.fa[i]!));
  }

  /** Groups of `flavor`'s schedulable nodes under `grouping` (sorted by key), built on first use. */
  groups(flavor: string, grouping: GroupingKey): NodeGroup[] {
    const k = `${flavor}\u0000${grouping}`;
    let gs = this.groupings.get(k);
    if (gs !== undefined) return gs;
    const fl = this.flavors.get(flavor);
    const byKey = new Map<string, NodeGroup>();
    for (const i of fl?.nodes ?? []) {
      const g = groupOfNode(this.nodes[i]!, grouping);
      if (g === null) continue;
      let group = byKey.get(g);
      if (group === undefined) {
        group = { grouping, key: g, nodes: [], freeSum: 0 };
        byKey.set(g, group);
      }
      group.nodes.push(i);
      group.freeSum += Math.max(0, this.fa[i]!);
      (this.memberships[i] ??= []).push(group);
    }
    gs = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.groupings.set(k, gs);
    return gs;
  }

  /** Node `i` gives `r` (a replica's accelerators, CPU and memory) to a holding. */
  take(i: number, r: ReplicaShape): void {
    this.apply(i, r, -1);
  }

  /** A holding gives `r` back to node `i`. */
  give(i: number, r: ReplicaShape): void {
    this.apply(i, r, 1);
  }

  /**
   * Changes node `i`'s free capacity by `r` (sign −1: consume). Keeps buckets, sums and the failed-shape
   * memo consistent.
   */
  private apply(i: number, r: ReplicaShape, sign: 1 | -1): void {
    const dA = sign * r.a;
    const dC = sign * r.c;
    const dM = sign * r.m;
    const fl = this.sealed && this.nodes[i]!.schedulable ? this.flavors.get(this.nodes[i]!.flavor) : undefined;
    const before = this.fa[i]!;
    const after = before + dA;
    if (fl !== undefined) {
      const b0 = this.bucketOf(fl, i);
      this.fa[i] = after;
      const b1 = this.bucketOf(fl, i);
      if (b0 !== b1) {
        fl.buckets[b0]!.delete(i);
        fl.buckets[b1]!.add(i);
      }
      const dPos = Math.max(0, after) - Math.max(0, before);
      fl.totalFree += dPos;
      const groups = this.memberships[i];
      if (groups !== undefined) for (const g of groups) g.freeSum += dPos;
      if (dA > 0 || dC > 0 || dM > 0) this.failed.delete(fl.name);
    } else {
      this.fa[i] = after;
    }
    this.fc[i] = this.fc[i]! + dC;
    this.fm[i] = this.fm[i]! + dM;
  }

  /** The largest total allocatable accelerators of one group of `grouping` on `flavor` (0 when none). */
  largestGroup(flavor: string, grouping: GroupingKey): Accelerators {
    const k = `${flavor}\u0000${grouping}`;
    let best = this.largest.get(k);
    if (best === undefined) {
      best = 0;
      for (const g of this.groups(flavor, grouping)) {
        let sum = 0;
        for (const i of g.nodes) sum += q(this.nodes[i]!.accelerators);
        best = Math.max(best, sum);
      }
      this.largest.set(k, best);
    }
    return best;
  }

  /** The groups of `grouping` that node `i` belongs to (only groupings already built). */
  groupsOfNode(i: number, grouping: GroupingKey): NodeGroup[] {
    return (this.memberships[i] ?? []).filter((g) => g.grouping === grouping);
  }

  /** The failed-shape memo of `flavor`, to restore after a tentative release that was undone. */
  savedFailures(flavor: string): Map<string, FailedShape> | undefined {
    return this.failed.get(flavor);
  }

  restoreFailures(flavor: string, saved: Map<string, FailedShape> | undefined): void {
    if (saved === undefined) this.failed.delete(flavor);
    else this.failed.set(flavor, saved);
  }

  failedShape(flavor: string, shapeKey: string): FailedShape | undefined {
    return this.failed.get(flavor)?.get(shapeKey);
  }

  rememberFailure(flavor: string, shapeKey: string, minK: number, detail: unknown): void {
    let m = this.failed.get(flavor);
    if (m === undefined) {
      m = new Map();
      this.failed.set(flavor, m);
    }
    const prev = m.get(shapeKey);
    if (prev === undefined || minK < prev.minK) m.set(shapeKey, { minK, detail });
  }
}
