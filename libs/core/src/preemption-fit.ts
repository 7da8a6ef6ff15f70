/**
 * Preemption: does the job fit once a set of victims is released (they are, on the cycle state)?
 * The checks that need no placement come first (`cheapLimits`: the flavor's free total, quota, a reclaim's
 * nominal, the slack of the team's reservations), then a placement under the reservations' caps.
 */
import { type BackfillLimits, backfillLimits } from './backfill.js';
import type { CycleState, Holding } from './cycle-state.js';
import { placeGang } from './gang-placer.js';
import type { PreemptionRequest } from './preemption-candidates.js';
import { maxAddableFor } from './quota.js';

export class VictimFit {
  constructor(
    private readonly st: CycleState,
    private readonly p: PreemptionRequest,
  ) {}

  /** Whether the job fits with `victims` released (they are, on the cycle state). */
  fits(victims: readonly Holding[]): boolean {
    const limits = this.cheapLimits(victims);
    return limits !== undefined && placeGang(this.st.cluster, { ...this.p.gang, caps: limits.caps }).ok;
  }

  /**
   * The checks that need no placement: the flavor's free accelerators and the team's quota allow the
   * job; a team that reclaims from another stays within its nominal; the quota slack of its own
   * reservations allows it. Gives the backfill limits to place with, or undefined.
   */
  cheapLimits(victims: readonly Holding[]): BackfillLimits | undefined {
    const { st, p } = this;
    if (p.nodes.totalFree < p.need || maxAddableFor(p.quota, p.job.preemptible) < p.need) return undefined;
    if (p.quota.used + p.need > p.quota.nominal && victims.some((v) => v.job.team !== p.job.team)) return undefined;
    const limits = backfillLimits(st, p.job, p.flavor);
    if (limits.slack !== undefined && limits.slack.quotaSlack < p.need) return undefined;
    return limits;
  }

  /** Nodes of a placement of the job on the current state (with the current caps), if it fits. */
  placementNodes(): Set<number> | undefined {
    const limits = backfillLimits(this.st, this.p.job, this.p.flavor);
    const fit = placeGang(this.st.cluster, { ...this.p.gang, caps: limits.caps });
    return fit.ok ? new Set(fit.nodes) : undefined;
  }
}
