/**
 * What may start while earlier jobs wait.
 *
 * With `options.backfill` (the default), a job may start on capacity that delays no reservation:
 * - work expected to end by a reservation's startAt may use anything free now;
 * - longer work (or of unknown runtime) may use, on a reserved node n, at most
 *   min(freeNow_n, headroom_n) where headroom_n = freeAtStart_n − reserved_n, and, when it belongs to
 *   the reservation's team, at most that reservation's quota slack at startAt.
 *
 * Without backfill (strict FIFO, the simulator's "FIFO without backfill" policy): once a job cannot
 * start, no later job may start on what it waits for —
 * - blocked by capacity (INSUFFICIENT_CAPACITY, TOPOLOGY_UNSATISFIABLE, COHORT_EXHAUSTED,
 *   BLOCKED_BY_RESERVATION) on flavor f: no later job of any team starts on f;
 * - blocked by its own team's quota (QUOTA_EXCEEDED) on f: no later job of that team starts on f.
 * Jobs that can never start (NO_QUOTA, UNSATISFIABLE, INVALID) or are only held back by the
 * per-team admission limit block nobody.
 */
import type { CycleState } from './cycle-state.js';
import { runtimeOn } from './flavor-selection.js';
import type { PendingCode, PendingJob } from './model.js';
import type { ActiveReservation } from './reservation-book.js';

/** Expected end of `job` if started now on `flavor`; unknown runtime counts as never ending (it is "long"). */
export function endIfStartedNow(st: CycleState, job: PendingJob, flavor: string): number {
  const rt = runtimeOn(job, flavor, st.flavors);
  return rt === null ? Infinity : st.now + rt * 1000;
}

export interface BackfillLimits {
  caps: Map<number, number> | undefined;
  /** The same-team reservation whose quota slack bounds this job, if any. */
  slack: ActiveReservation | undefined;
  /** The first reservation this job would overlap (for messages); there is one whenever `caps` is set. */
  firstOverlapping: ActiveReservation | undefined;
}

export function backfillLimits(st: CycleState, job: PendingJob, flavor: string): BackfillLimits {
  const end = endIfStartedNow(st, job, flavor);
  return {
    caps: st.reservations.capsFor(flavor, end),
    slack: st.reservations.quotaSlackFor(job.team, flavor, end),
    firstOverlapping: st.reservations.firstOverlapping(flavor, end),
  };
}

const CAPACITY_CODES: ReadonlySet<PendingCode> = new Set([
  'INSUFFICIENT_CAPACITY',
  'TOPOLOGY_UNSATISFIABLE',
  'COHORT_EXHAUSTED',
  'BLOCKED_BY_RESERVATION',
]);

/** Strict-FIFO bookkeeping (inactive when backfill is on). */
export class FifoGate {
  private readonly flavorBlockers = new Map<string, PendingJob>();
  private readonly teamBlockers = new Map<string, PendingJob>();

  constructor(private readonly enabled: boolean) {}

  /** The earlier job that `job` must wait behind on `flavor`, if any. */
  blockerOf(job: PendingJob, flavor: string): PendingJob | undefined {
    if (!this.enabled) return undefined;
    return this.flavorBlockers.get(flavor) ?? this.teamBlockers.get(`${job.team}\u0000${flavor}`);
  }

  /** Records that `job` could not start on each flavor for the given code. */
  recordBlocked(job: PendingJob, failures: readonly { flavor: string; code: PendingCode }[]): void {
    if (!this.enabled) return;
    for (const f of failures) {
      if (CAPACITY_CODES.has(f.code)) {
        if (!this.flavorBlockers.has(f.flavor)) this.flavorBlockers.set(f.flavor, job);
      } else if (f.code === 'QUOTA_EXCEEDED') {
        const k = `${job.team}\u0000${f.flavor}`;
        if (!this.teamBlockers.has(k)) this.teamBlockers.set(k, job);
      }
    }
  }
}
