/**
 * The reservations made so far in a cycle, kept exact as capacity is held and released (CycleState calls
 * onHold and onRelease): per reserved node, what work running past the reservation's start may still take,
 * and the same team's quota slack. How a reservation is found is reservations.ts.
 */
import type { Holding } from './holding.js';
import type { PendingJob, Reservation } from './model.js';

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

  /** The first reservation of `flavor` that work ending at `end` would overlap. */
  firstOverlapping(flavor: string, end: number): ActiveReservation | undefined {
    return this.active.find((r) => r.flavor === flavor && r.startAt < end);
  }

  /** Per-node accelerator ceilings for work on `flavor` ending at `end`; undefined when none apply. */
  capsFor(flavor: string, end: number): Map<number, number> | undefined {
    let caps: Map<number, number> | undefined;
    for (const r of this.active) {
      if (r.flavor !== flavor || !(r.startAt < end)) continue;
      caps ??= new Map();
      for (const [i, h] of r.headroom) caps.set(i, Math.min(caps.get(i) ?? Infinity, Math.max(0, h)));
    }
    return caps;
  }

  /** The tightest same-team quota slack on `flavor` for work ending at `end`. */
  quotaSlackFor(team: string, flavor: string, end: number): ActiveReservation | undefined {
    let worst: ActiveReservation | undefined;
    for (const r of this.active) {
      if (r.flavor !== flavor || !(r.startAt < end) || r.job.team !== team) continue;
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
