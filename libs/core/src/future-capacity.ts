/**
 * A flavor as the reservation search (reservations.ts) sees it at the instant it examines: free
 * capacity now, minus what earlier reservations hold, plus what work ending by then has released;
 * the job's team quota likewise. Replica slots are counted per node and per group and updated as
 * releases touch nodes, so a placement is tried only once the gang fits in some group by count.
 */
import type { FlavorNodes, NodeGroup } from './cluster-state.js';
import type { CycleState, Holding } from './cycle-state.js';
import { type FreeView, type GangRequest, placeInGroups, slotsOn } from './gang-placer.js';
import type { PendingJob } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB } from './quantity.js';
import { type QuotaEntry, maxAddableAfterRelease, overflowDropOnRelease } from './quota.js';
import { groupingOf } from './topology.js';

/** What earlier reservations of this cycle hold, as seen by a new one on `flavor`. */
export interface EarlierReservations {
  /** Accelerators held per node (every flavor). */
  heldPerNode: Map<number, number>;
  /** Accelerators reserved on the flavor, and by the same team on it. */
  heldOnFlavor: number;
  reservedSameTeam: number;
}

/** Sums the reservations made so far: a later reservation treats their nodes as held from now on. */
export function earlierReservations(st: CycleState, team: string, flavor: string): EarlierReservations {
  const heldPerNode = new Map<number, number>();
  let reservedSameTeam = 0;
  let heldOnFlavor = 0;
  for (const r of st.reservations.active) {
    for (const [i, a] of r.held) heldPerNode.set(i, (heldPerNode.get(i) ?? 0) + a);
    if (r.flavor === flavor) heldOnFlavor += r.need;
    if (r.job.team === team && r.flavor === flavor) reservedSameTeam += r.need;
  }
  return { heldPerNode, heldOnFlavor, reservedSameTeam };
}

/** A reservation found at `t`: the nodes to hold and what remains around them. */
export interface FoundPlacement {
  /** Accelerators to hold per node. */
  held: Map<number, number>;
  /** Per held node: accelerators free at `t` beyond the reservation. */
  headroom: Map<number, number>;
  /** The team's quota headroom at `t` beyond the reservation. */
  quotaSlack: number;
}

export class FutureCapacity {
  /** Free capacity at the instant examined. */
  readonly view: FreeView;
  // Plain arrays, not typed ones: a typed array this size gets a backing store outside the heap, dearer
  // to make than the search it serves.
  /** Per node index: capacity released (+) or held by earlier reservations (−) at the instant examined. */
  private readonly extraA: Accelerators[];
  private readonly extraC: CpuMillis[];
  private readonly extraM: MemoryMiB[];
  private readonly groups: readonly NodeGroup[];
  /** Per node index: the position of its group in `groups` (−1: none), and its replica slots. */
  private readonly groupOf: number[];
  private readonly slots: number[];
  /** Per group position: Σ slots of its nodes. */
  private readonly groupSlots: number[];
  /** Some group has enough replica slots (by count; a placement may still fail). */
  private fitsSomewhere = false;
  /** Accelerators released so far per team, and the drop of the pool's overflow they bring. */
  private readonly released = new Map<string, number>();
  private overflowDrop = 0;

  constructor(
    private readonly st: CycleState,
    private readonly job: PendingJob,
    private readonly quota: QuotaEntry,
    nodes: FlavorNodes,
    private readonly req: GangRequest,
    private readonly earlier: EarlierReservations,
  ) {
    const n = st.cluster.nodes.length;
    const extraA = (this.extraA = new Array<Accelerators>(n).fill(0));
    const extraC = (this.extraC = new Array<CpuMillis>(n).fill(0));
    const extraM = (this.extraM = new Array<MemoryMiB>(n).fill(0));
    for (const [i, a] of earlier.heldPerNode) extraA[i] = -a;
    const cluster = st.cluster;
    this.view = {
      freeA: (i) => cluster.freeA(i) + extraA[i]!,
      freeC: (i) => cluster.freeC(i) + extraC[i]!,
      freeM: (i) => cluster.freeM(i) + extraM[i]!,
    };
    const grouping = groupingOf(job.topology);
    this.groups = grouping === 'none' ? [{ key: '', nodes: nodes.nodes, freeSum: 0 }] : st.cluster.groups(req.flavor, grouping);
    this.groupOf = new Array<number>(n).fill(-1);
    this.slots = new Array<number>(n).fill(0);
    this.groupSlots = new Array<number>(this.groups.length).fill(0);
    this.countSlots();
  }

  /** The work of `h` has ended: its nodes and quota are free from now on. */
  release(h: Holding): void {
    const { extraA, extraC, extraM } = this;
    for (const rep of h.replicas) {
      extraA[rep.node] = extraA[rep.node]! + rep.a;
      extraC[rep.node] = extraC[rep.node]! + rep.c;
      extraM[rep.node] = extraM[rep.node]! + rep.m;
      this.recountNode(rep.node);
    }
    this.releaseQuota(h);
  }

  /** The nodes the gang would hold if it started at the instant examined, or undefined when it cannot. */
  place(): FoundPlacement | undefined {
    if (!this.fitsSomewhere || !this.quotaAllows()) return undefined;
    const { view, req } = this;
    const fit = placeInGroups(view, this.groups, (g) => sumFree(view, g), req);
    if (!fit.ok) return undefined;
    const held = new Map<number, number>();
    for (const i of fit.nodes) held.set(i, (held.get(i) ?? 0) + req.shape.a);
    const headroom = new Map<number, number>();
    for (const [i, a] of held) headroom.set(i, Math.max(0, view.freeA(i) - a));
    return { held, headroom, quotaSlack: this.quotaHeadroom() - req.shape.a * req.minK };
  }

  private countSlots(): void {
    const { view, req, groupOf, slots } = this;
    for (let gi = 0; gi < this.groups.length; gi++) {
      let sum = 0;
      for (const i of this.groups[gi]!.nodes) {
        groupOf[i] = gi;
        const s = slotsOn(view, i, req.shape, req.minK);
        slots[i] = s;
        sum += s;
      }
      this.groupSlots[gi] = sum;
      if (sum >= req.minK) this.fitsSomewhere = true;
    }
  }

  private recountNode(i: number): void {
    const gi = this.groupOf[i]!;
    if (gi < 0) return;
    const s = slotsOn(this.view, i, this.req.shape, this.req.minK);
    const total = this.groupSlots[gi]! + s - this.slots[i]!;
    this.slots[i] = s;
    this.groupSlots[gi] = total;
    if (total >= this.req.minK) this.fitsSomewhere = true;
  }

  private releaseQuota(h: Holding): void {
    const other = this.st.quota.get(h.job.team, this.req.flavor);
    if (other === undefined) return;
    const before = this.released.get(h.job.team) ?? 0;
    const after = before + h.accelerators;
    this.released.set(h.job.team, after);
    if (other.pool !== null && other.pool === this.quota.pool) {
      this.overflowDrop +=
        overflowDropOnRelease(other.used, other.guaranteed, after) - overflowDropOnRelease(other.used, other.guaranteed, before);
    }
  }

  /** The team's quota headroom at the instant examined, net of its earlier reservations on the flavor. */
  private quotaHeadroom(): number {
    return maxAddableAfterRelease(this.quota, this.released.get(this.job.team) ?? 0, this.overflowDrop, this.job.preemptible) - this.earlier.reservedSameTeam;
  }

  private quotaAllows(): boolean {
    return this.quotaHeadroom() >= this.req.shape.a * this.req.minK;
  }
}

function sumFree(view: FreeView, g: NodeGroup): number {
  let s = 0;
  for (const i of g.nodes) s += Math.max(0, view.freeA(i));
  return s;
}
