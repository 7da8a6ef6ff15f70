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
import type { CycleState } from './cycle-state.js';
import { type FoundPlacement, FutureCapacity, earlierReservations } from './future-capacity.js';
import { type GangRequest, shapeKey } from './gang-placer.js';
import type { PendingJob } from './model.js';
import type { ActiveReservation } from './reservation-book.js';
import { quotaCeiling } from './quota.js';
import { isMultiRole, preemptionGang } from './roles.js';

/**
 * The earliest reservation of `k` replicas of `job` on `flavor`, or undefined when even the end of
 * every known job would not make room (the gang is then larger than what quota or the fleet allow):
 *
 *   0. skip a request already found hopeless in this cycle (`FailedReservations`);
 *   1. take away what earlier reservations hold, and stop if quota or the flavor's size rule it out;
 *   2. try now; then walk the flavor's release timeline, one instant (one expected end) at a time,
 *      releasing the work that ends then and trying again (`FutureCapacity`), until the gang fits.
 */
export function computeReservation(st: CycleState, job: PendingJob, flavor: string, k: number): ActiveReservation | undefined {
  const e = st.quota.get(job.team, flavor);
  const fl = st.cluster.flavor(flavor);
  if (e === undefined || e.implicit || fl === undefined) return undefined;
  // A multi-role gang reserves for its accelerator roles as one uniform gang (roles.ts `preemptionGang`).
  let shape = { a: job.acceleratorsPerReplica, c: job.cpuMillisPerReplica, m: job.memoryMiBPerReplica };
  if (isMultiRole(job)) ({ shape, minK: k } = preemptionGang(job));
  const need = shape.a * k;
  const req: GangRequest = { flavor, shape, minK: k, maxK: k, topology: job.topology };
  const failed = new FailedReservations(st, job.team, req);
  if (failed.covers()) return undefined;

  const earlier = earlierReservations(st, job.team, flavor);
  if (quotaCeiling(e) - earlier.reservedSameTeam < need || fl.totalAllocatable - earlier.heldOnFlavor < need) return failed.remember();

  const future = new FutureCapacity(st, job, e, fl, req, earlier);
  const reservationAt = (t: number): ActiveReservation | undefined => {
    const found = future.place();
    return found && activeReservation(st, job, flavor, t, need, found);
  };
  const first = reservationAt(st.now);
  if (first !== undefined) return first;
  const tl = st.timeline(flavor);
  let idx = 0;
  while (idx < tl.length) {
    const t = tl[idx]!.end;
    if (t === Infinity) break; // the rest never ends (serving work): nothing more is ever expected back
    while (idx < tl.length && tl[idx]!.end === t) {
      const h = tl[idx]!;
      if (!h.removed) future.release(h);
      idx++;
    }
    const r = reservationAt(t);
    if (r !== undefined) return r;
  }
  return failed.remember();
}

/**
 * Requests of a team on a flavor and shape that fit nowhere even after every known job ended. The
 * view is then the same whatever runs now, so such a request never fits until another reservation
 * changes it (the count of reservations is the key's epoch); neither does one of more replicas.
 */
class FailedReservations {
  private readonly key: string;

  constructor(
    private readonly st: CycleState,
    team: string,
    private readonly req: GangRequest,
  ) {
    this.key = `${team}|${req.flavor}|${shapeKey(req)}`;
  }

  covers(): boolean {
    const prev = this.st.failedReservations.get(this.key);
    return prev !== undefined && prev.count === this.st.reservations.count && prev.minK <= this.req.minK;
  }

  remember(): undefined {
    this.st.failedReservations.set(this.key, { count: this.st.reservations.count, minK: this.req.minK });
    return undefined;
  }
}

function activeReservation(st: CycleState, job: PendingJob, flavor: string, startAt: number, need: number, found: FoundPlacement): ActiveReservation {
  const nodes = [...found.held]
    .map(([i, a]) => ({ node: st.cluster.nodes[i]!.name, accelerators: a }))
    .sort((x, y) => (x.node < y.node ? -1 : x.node > y.node ? 1 : 0));
  return {
    reservation: { jobId: job.id, flavor, startAt, nodes },
    job,
    flavor,
    startAt,
    held: found.held,
    headroom: found.headroom,
    quotaSlack: found.quotaSlack,
    need,
  };
}
