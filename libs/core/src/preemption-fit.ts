/**
 * Preemption, steps 2 and 3: does the job fit once the victims released so far are gone?
 *
 * Placement is the expensive check, so it runs only once quota and the flavor's free total allow the
 * job (`cheapLimits`), and after a failed placement only what later victims changed is examined again:
 * - level none: an upper bound of replica slots (caps ignored), kept current as victims are released;
 *   no placement is tried until it reaches the gang's size;
 * - a topology level: first the group that fitted last time, then only the groups holding nodes
 *   released since the failure (nothing else changed).
 * `forgetFailure` drops that knowledge when victims are put back (step 3), so the next check is in full.
 */
import { type BackfillLimits, backfillLimits } from './backfill.js';
import type { NodeGroup } from './cluster-state.js';
import type { CycleState, Holding } from './cycle-state.js';
import { groupSlots, placeGang, slotsAnywhere, slotsOn } from './gang-placer.js';
import type { PreemptionRequest } from './preemption-candidates.js';
import { maxAddable } from './quota.js';

export class VictimFit {
  /** A placement failed and nothing was put back since. */
  private knownFailure = false;
  /** Level none, after a failed placement: an upper bound of replica slots (caps ignored). */
  private noneBound = 0;
  /** Victims released since the last failed placement (topology levels). */
  private touched: Holding[] = [];
  /** The group the last successful incremental check placed the job in. */
  private lastGood: NodeGroup | undefined;

  constructor(
    private readonly st: CycleState,
    private readonly p: PreemptionRequest,
  ) {}

  /** Releases `victim` on the cycle state, keeping the incremental bounds current. */
  release(victim: Holding): void {
    if (this.p.grouping === 'none' && this.knownFailure) this.noneBound += this.slotGain(victim);
    else this.st.release(victim);
    this.touched.push(victim);
  }

  /** Victims were put back: the next check places in full. */
  forgetFailure(): void {
    this.knownFailure = false;
  }

  /** Whether the job fits with `victims` released (they are, on the cycle state). */
  fits(victims: readonly Holding[]): boolean {
    const limits = this.cheapLimits(victims);
    return limits !== undefined && this.placementFits(limits.caps);
  }

  /**
   * The checks that need no placement: the flavor's free accelerators and the team's quota allow the
   * job; a team that reclaims from another stays within its nominal; the quota slack of its own
   * reservations allows it. Gives the backfill limits to place with, or undefined.
   */
  cheapLimits(victims: readonly Holding[]): BackfillLimits | undefined {
    const { st, p } = this;
    if (p.nodes.totalFree < p.need || maxAddable(p.quota) < p.need) return undefined;
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

  private placementFits(caps: ReadonlyMap<number, number> | undefined): boolean {
    const { st, p } = this;
    const minK = p.job.minReplicas;
    if (p.grouping === 'none') {
      if (this.knownFailure && this.noneBound < minK) return false;
      const ok = placeGang(st.cluster, { ...p.gang, caps }).ok;
      if (!ok) {
        this.knownFailure = true;
        this.noneBound = slotsAnywhere(st.cluster, p.gang, minK);
      }
      return ok;
    }
    if (this.lastGood !== undefined && this.inGroup(this.lastGood, caps)) return true;
    if (this.knownFailure) return this.fitsInTouchedGroup(caps);
    const ok = placeGang(st.cluster, { ...p.gang, caps }).ok;
    if (!ok) {
      this.knownFailure = true;
      this.touched = [];
    }
    return ok;
  }

  /** After a failed placement at a topology level: whether a group holding a node released since fits. */
  private fitsInTouchedGroup(caps: ReadonlyMap<number, number> | undefined): boolean {
    const seen = new Set<NodeGroup>();
    for (const h of this.touched) {
      for (const rep of h.replicas) {
        for (const g of this.st.cluster.groupsOfNode(rep.node, this.p.grouping)) {
          if (seen.has(g)) continue;
          seen.add(g);
          if (this.inGroup(g, caps)) {
            this.lastGood = g;
            return true;
          }
        }
      }
    }
    this.touched = [];
    return false;
  }

  private inGroup(g: NodeGroup, caps: ReadonlyMap<number, number> | undefined): boolean {
    return g.freeSum >= this.p.need && groupSlots(this.st.cluster, g, { ...this.p.gang, caps }) >= this.p.job.minReplicas;
  }

  /** Releases `h` and returns how many replica slots its flavor's schedulable nodes gained (no caps). */
  private slotGain(h: Holding): number {
    const { st, p } = this;
    const nodes = [...new Set(h.replicas.map((r) => r.node))].filter((i) => {
      const n = st.cluster.nodes[i]!;
      return n.flavor === p.flavor && n.schedulable;
    });
    const before = nodes.map((i) => slotsOn(st.cluster, i, p.shape, p.job.minReplicas));
    st.release(h);
    return nodes.reduce((sum, i, j) => sum + slotsOn(st.cluster, i, p.shape, p.job.minReplicas) - before[j]!, 0);
  }
}
