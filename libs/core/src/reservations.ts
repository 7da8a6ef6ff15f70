/**
 * Reservations: a job in order that cannot start now (and is within `options.reservationDepth`) gets
 * the earliest time it could start, found by walking its flavor's release timeline (running and
 * just-admitted work, by expected end: admittedAt + expectedRuntimeSeconds, or the default runtime;
 * overdue work counts as ending now) until both quota and node placement allow it. The nodes and
 * accelerators it would use are held from `startAt`:
 *
 * - per held node, `headroom` = free accelerators at startAt − reserved: what work still running at
 *   startAt may take there (backfill.ts turns this into per-node caps);
 * - per reservation, `quotaSlack` = the team's quota headroom at startAt − the reservation: what more
 *   work of the same team on that flavor, still running at startAt, may take.
 *
 * Both are kept current by `onHold` / `onRelease` as the cycle admits and preempts. Simplifications,
 * all conservative: a later reservation treats earlier ones' nodes (and, for the same team, quota) as
 * held from now on; CPU and memory are not held (only accelerators); quota used by other teams of
 * the cohort after startAt is not protected.
 */
import type { CycleState, Holding } from './cycle-state.js';
import { type FreeView, type GangRequest, placeInGroups, shapeKey, slotsOn } from './gang-placer.js';
import type { NodeGroup } from './cluster-state.js';
import type { PendingJob, Reservation } from './model.js';
import { maxAddableAfterRelease, overflowDropOnRelease, quotaCeiling } from './quota.js';
import { groupingOf } from './topology.js';

export interface ActiveReservation {
  reservation: Reservation;
  job: PendingJob;
  flavor: string;
  startAt: number;
  /** Accelerators reserved per node index. */
  held: Map<number, number>;
  /** Per held node: accelerators that work running past startAt may still take. */
  headroom: Map<number, number>;
  /** Quota the same team may still take on the flavor with work running past startAt. */
  quotaSlack: number;
  /** Accelerators the reservation needs. */
  need: number;
}

export class ReservationBook {
  readonly active: ActiveReservation[] = [];

  add(r: ActiveReservation): void {
    this.active.push(r);
  }

  get count(): number {
    return this.active.length;
  }

  /** Reservations of `flavor` that work ending at `end` would overlap. */
  overlapping(flavor: string, end: number): ActiveReservation[] {
    return this.active.filter((r) => r.flavor === flavor && r.startAt < end);
  }

  /** Per-node accelerator ceilings for work on `flavor` ending at `end`; undefined when none apply. */
  capsFor(flavor: string, end: number): Map<number, number> | undefined {
    let caps: Map<number, number> | undefined;
    for (const r of this.overlapping(flavor, end)) {
      caps ??= new Map();
      for (const [i, h] of r.headroom) caps.set(i, Math.min(caps.get(i) ?? Infinity, Math.max(0, h)));
    }
    return caps;
  }

  /** The tightest same-team quota slack on `flavor` for work ending at `end`. */
  quotaSlackFor(team: string, flavor: string, end: number): ActiveReservation | undefined {
    let worst: ActiveReservation | undefined;
    for (const r of this.overlapping(flavor, end)) {
      if (r.job.team !== team) continue;
      if (worst === undefined || r.quotaSlack < worst.quotaSlack) worst = r;
    }
    return worst;
  }

  onHold(h: Holding): void {
    this.adjust(h, -1);
  }

  onRelease(h: Holding): void {
    this.adjust(h, +1);
  }

  private adjust(h: Holding, sign: number): void {
    for (const r of this.active) {
      if (r.flavor !== h.flavor || r.startAt >= h.end) continue;
      for (const rep of h.replicas) {
        const hr = r.headroom.get(rep.node);
        if (hr !== undefined) r.headroom.set(rep.node, hr + sign * rep.a);
      }
      if (r.job.team === h.job.team) r.quotaSlack += sign * h.accelerators;
    }
  }
}

/**
 * The earliest reservation of `k` replicas of `job` on `flavor`, or undefined when even the end of
 * every known job would not make room (the gang is then larger than what quota or the fleet allow).
 */
export function computeReservation(st: CycleState, job: PendingJob, flavor: string, k: number): ActiveReservation | undefined {
  const e = st.quota.get(job.team, flavor);
  const fl = st.cluster.flavor(flavor);
  if (e === undefined || e.implicit || fl === undefined) return undefined;
  const shape = { a: job.acceleratorsPerReplica, c: job.cpuMillisPerReplica, m: job.memoryMiBPerReplica };
  const need = shape.a * k;
  const req: GangRequest = { flavor, shape, minK: k, maxK: k, topology: job.topology };

  // Once every known job has ended, the view is the same whatever runs now; a request that does not
  // fit then never will (until another reservation changes it), so failures are memoized.
  const memoKey = `${job.team}|${flavor}|${shapeKey(req)}`;
  const prev = st.failedReservations.get(memoKey);
  if (prev !== undefined && prev.count === st.reservations.count && prev.minK <= k) return undefined;
  const never = (): undefined => {
    st.failedReservations.set(memoKey, { count: st.reservations.count, minK: k });
    return undefined;
  };

  // The view of free capacity at the time being examined: now + releases − earlier reservations.
  const extra = new Map<number, number>();
  const extraC = new Map<number, number>();
  const extraM = new Map<number, number>();
  let reservedSameTeam = 0;
  let heldOnFlavor = 0;
  for (const r of st.reservations.active) {
    for (const [i, a] of r.held) extra.set(i, (extra.get(i) ?? 0) - a);
    if (r.flavor === flavor) heldOnFlavor += r.need;
    if (r.job.team === job.team && r.flavor === flavor) reservedSameTeam += r.need;
  }
  if (quotaCeiling(e) - reservedSameTeam < need || fl.totalAllocatable - heldOnFlavor < need) return never();
  const view: FreeView = {
    freeA: (i) => st.cluster.freeA(i) + (extra.get(i) ?? 0),
    freeC: (i) => st.cluster.freeC(i) + (extraC.get(i) ?? 0),
    freeM: (i) => st.cluster.freeM(i) + (extraM.get(i) ?? 0),
  };

  // Replica slots per node and per group, updated as releases touch nodes.
  const grouping = groupingOf(job.topology);
  const groups: readonly NodeGroup[] =
    grouping === 'none' ? [{ key: '', nodes: fl.nodes, freeSum: 0 }] : st.cluster.groups(flavor, grouping);
  const groupOf = new Map<number, NodeGroup>();
  const slots = new Map<number, number>();
  const groupSlots = new Map<NodeGroup, number>();
  let fitsSomewhere = false;
  for (const g of groups) {
    let sum = 0;
    for (const i of g.nodes) {
      groupOf.set(i, g);
      const s = slotsOn(view, i, shape, k);
      slots.set(i, s);
      sum += s;
    }
    groupSlots.set(g, sum);
    if (sum >= k) fitsSomewhere = true;
  }

  // Quota at the time being examined.
  const released = new Map<string, number>();
  let overflowDrop = 0;
  const quotaAllows = (): boolean =>
    maxAddableAfterRelease(e, released.get(job.team) ?? 0, overflowDrop) - reservedSameTeam >= need;

  const releaseHolding = (h: Holding): void => {
    for (const rep of h.replicas) {
      extra.set(rep.node, (extra.get(rep.node) ?? 0) + rep.a);
      extraC.set(rep.node, (extraC.get(rep.node) ?? 0) + rep.c);
      extraM.set(rep.node, (extraM.get(rep.node) ?? 0) + rep.m);
      const g = groupOf.get(rep.node);
      if (g === undefined) continue;
      const s = slotsOn(view, rep.node, shape, k);
      const total = groupSlots.get(g)! + s - slots.get(rep.node)!;
      slots.set(rep.node, s);
      groupSlots.set(g, total);
      if (total >= k) fitsSomewhere = true;
    }
    const other = st.quota.get(h.job.team, flavor);
    if (other === undefined) return;
    const before = released.get(h.job.team) ?? 0;
    const after = before + h.accelerators;
    released.set(h.job.team, after);
    if (other.pool !== null && other.pool === e.pool) {
      overflowDrop +=
        overflowDropOnRelease(other.used, other.guaranteed, after) -
        overflowDropOnRelease(other.used, other.guaranteed, before);
    }
  };

  const attempt = (t: number): ActiveReservation | undefined => {
    if (!fitsSomewhere || !quotaAllows()) return undefined;
    const fit = placeInGroups(view, groups, (g) => sumFree(view, g), req);
    if (!fit.ok) return undefined;
    const held = new Map<number, number>();
    for (const i of fit.nodes) held.set(i, (held.get(i) ?? 0) + shape.a);
    const headroom = new Map<number, number>();
    for (const [i, a] of held) headroom.set(i, Math.max(0, view.freeA(i) - a));
    const nodes = [...held]
      .map(([i, a]) => ({ node: st.cluster.nodes[i]!.name, accelerators: a }))
      .sort((x, y) => (x.node < y.node ? -1 : x.node > y.node ? 1 : 0));
    return {
      reservation: { jobId: job.id, flavor, startAt: t, nodes },
      job,
      flavor,
      startAt: t,
      held,
      headroom,
      quotaSlack: maxAddableAfterRelease(e, released.get(job.team) ?? 0, overflowDrop) - reservedSameTeam - need,
      need,
    };
  };

  const first = attempt(st.now);
  if (first !== undefined) return first;
  const tl = st.timeline(flavor);
  let idx = 0;
  while (idx < tl.length) {
    const t = tl[idx]!.end;
    while (idx < tl.length && tl[idx]!.end === t) {
      const h = tl[idx]!;
      if (!h.removed) releaseHolding(h);
      idx++;
    }
    const r = attempt(t);
    if (r !== undefined) return r;
  }
  return never();
}

function sumFree(view: FreeView, g: NodeGroup): number {
  let s = 0;
  for (const i of g.nodes) s += Math.max(0, view.freeA(i));
  return s;
}
