/**
 * The flavor-assignment stage of a job's decision (as Kueue's flavor assigner): the flavors the job may try
 * this cycle, in the order it tries them — its listed (or fastest-first) order, less the flavors a
 * reservation of a job ahead of it holds back (FIFO without backfill), and with relative-speed placement
 * its flavor of greatest value (its home) first. Relative-speed placement, the cycle's flavor prices and
 * the waits for a busy fast flavor sit behind this stage (relative-placement.ts, flavor-market.ts); fitting,
 * preempting and reserving then work on what it returns.
 */
import type { FifoGate } from './backfill.js';
import type { CycleState } from './cycle-state.js';
import { buildMarket } from './flavor-market.js';
import type { FlavorMarket } from './flavor-prices.js';
import { flavorOrder } from './flavor-selection.js';
import type { PendingJob } from './model.js';
import { type FlavorFailure, fifoMessage } from './reasons.js';
import { PendingByFlavors, type RelativePlan, WaitBook, fasterHome, placesByRelativeSpeed, relativePlan } from './relative-placement.js';

/** Relative-speed placement's per-cycle state: the flavor prices (built on first use) and the waits. */
export class Heterogeneity {
  private built: FlavorMarket | undefined;
  private byFlavors: PendingByFlavors | undefined;
  readonly waits: WaitBook;
  /**
   * Whether any job of the cycle may be placed by relative speed: the waits are read only then, so
   * without one they need not be kept.
   */
  readonly inUse: boolean;

  constructor(
    private readonly st: CycleState,
    pending: readonly PendingJob[],
  ) {
    this.waits = new WaitBook(st);
    this.inUse = pending.some((j) => Array.isArray(j.flavors) && placesByRelativeSpeed(st, j));
  }

  get market(): FlavorMarket {
    this.built ??= buildMarket(this.st);
    return this.built;
  }

  /** The pending jobs by the flavors they accept (built on first use): who a slower run delays. */
  get pendingByFlavors(): PendingByFlavors {
    this.byFlavors ??= new PendingByFlavors(this.st.snapshot.pending);
    return this.byFlavors;
  }
}

export interface FlavorAssignment {
  /** The flavors the job may try now, in the order it tries them. */
  open: string[];
  /** The flavors a reservation ahead of it holds back, each with why. */
  heldBack: FlavorFailure[];
  /** With relative-speed placement: its home and the value of each flavor (undefined otherwise). */
  plan: RelativePlan | undefined;
}

/** The flavors `job` may try this cycle, and in which order (see above). */
export function assignFlavors(st: CycleState, job: PendingJob, fifo: FifoGate, hetero: Heterogeneity): FlavorAssignment {
  const heldBack: FlavorFailure[] = [];
  const listed: string[] = [];
  for (const f of flavorOrder(job, st.flavors, st.snapshot.options)) {
    const blocker = fifo.blockerOf(job, f);
    if (blocker === undefined) listed.push(f);
    else heldBack.push({ flavor: f, code: 'BLOCKED_BY_RESERVATION', message: fifoMessage(job, blocker, f) });
  }
  const valued = placesByRelativeSpeed(st, job) ? relativePlan(st, hetero.market, job, listed) : undefined;
  const plan = valued === undefined ? undefined : fasterHome(st, hetero.waits, valued, job);
  return { open: plan === undefined ? listed : plan.order, heldBack, plan };
}
