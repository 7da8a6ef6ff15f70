/**
 * Preemption: the candidates of one priority tier in order of lost work, read lazily (victim-search.ts).
 *
 * A source's victim list is sorted by priority, then by lost work (preemption-candidates.ts
 * `compareCandidates`), so the candidates of priority ≤ a tier are a merge of runs — one per source and
 * priority — each already in order of lost work.
 */
import { type CycleState, type Holding, lostWork, victimBound } from './cycle-state.js';
import { type PreemptionRequest, type Source, eligible } from './preemption-candidates.js';
import type { SlotCount } from './slot-count.js';

export interface Candidate {
  h: Holding;
  /** Work it loses, accelerator-ms. */
  cost: number;
  acc: number;
  /** Its accelerators on nodes the job can use. */
  usable: number;
  source: Source;
}

/** The distinct priorities of the sources' candidates, ascending. */
export function priorityTiers(sources: readonly Source[]): number[] {
  const tiers = new Set<number>();
  for (const src of sources) {
    for (let i = src.start; i < src.list.length; i = firstAbove(src.list, i, src.list[i]!.job.priority)) {
      const h = src.list[i]!;
      if (!src.stillEligible(h)) break;
      tiers.add(h.job.priority);
    }
  }
  return [...tiers].sort((x, y) => x - y);
}

/** An upper bound of the accelerators the candidates of priority ≤ `tier` could free. */
export function tierBound(sources: readonly Source[], tier: number): number {
  let sum = 0;
  for (const src of sources) sum += victimBound(src.victims, (pr) => pr <= tier);
  return sum;
}

/** The first index from `from` of a list sorted by priority whose priority is above `priority`. */
function firstAbove(list: readonly Holding[], from: number, priority: number): number {
  let lo = from;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.job.priority <= priority) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The candidates of priority ≤ `tier` that `keep` accepts, in order of lost work. Skips candidates that
 * may not be victims of the job now, and those on no node the job can use that free no quota it lacks.
 */
export class TierStream {
  private readonly runs: { src: Source; i: number; end: number }[] = [];
  private buffered: Candidate | undefined;

  constructor(
    private readonly st: CycleState,
    private readonly p: PreemptionRequest,
    private readonly slots: SlotCount,
    private readonly quotaGap: number,
    sources: readonly Source[],
    tier: number,
    private readonly keep: (h: Holding) => boolean,
  ) {
    for (const src of sources) {
      for (let i = src.start; i < src.list.length && src.list[i]!.job.priority <= tier; ) {
        const end = firstAbove(src.list, i, src.list[i]!.job.priority);
        this.runs.push({ src, i, end });
        i = end;
      }
    }
  }

  /** The next candidate without taking it. */
  peek(): Candidate | undefined {
    this.buffered ??= this.pull();
    return this.buffered;
  }

  next(): Candidate | undefined {
    const c = this.peek();
    this.buffered = undefined;
    return c;
  }

  private pull(): Candidate | undefined {
    const { st, p, slots } = this;
    for (;;) {
      let best: { src: Source; i: number; end: number } | undefined;
      let bestCost = Infinity;
      for (const run of this.runs) {
        if (run.i >= run.end) continue;
        const cost = lostWork(run.src.list[run.i]!, st.now);
        if (cost < bestCost) {
          best = run;
          bestCost = cost;
        }
      }
      if (best === undefined) return undefined;
      const h = best.src.list[best.i++]!;
      if (!this.keep(h) || !eligible(st, best.src, h, p.job)) continue;
      const usable = slots.usable(h);
      // A candidate on no node the job can use helps only by the quota it frees.
      if (usable === 0 && !(this.quotaGap > 0 && h.accelerators > 0) && !slots.touches(h)) continue;
      return { h, cost: bestCost, acc: h.accelerators, usable, source: best.src };
    }
  }
}
