/**
 * A cycle's flavor prices, and a job's normalised speeds (its speed on each flavor ÷ its best): what
 * relative-speed placement weighs. How the prices are set is flavor-market.ts (buildMarket); this file
 * depends on neither moves nor placement, so both can read prices without an import circle.
 */
import type { CycleState } from './cycle-state.js';
import { effectiveSpeed } from './flavor-selection.js';
import type { JobSpec } from './model.js';

export class FlavorMarket {
  private readonly index = new Map<string, number>();
  private readonly prices: number[];

  constructor(
    readonly names: readonly string[],
    prices: readonly number[],
  ) {
    names.forEach((n, i) => this.index.set(n, i));
    this.prices = [...prices];
  }

  /** λ of `flavor` (0 for flavors outside the market). */
  price(flavor: string): number {
    const i = this.index.get(flavor);
    return i === undefined ? 0 : this.prices[i]!;
  }

  /** Whether any flavor is oversubscribed. */
  get contended(): boolean {
    return this.prices.some((p) => p > 0);
  }
}

/** Normalised speeds of `job` on the flavors in `usable` it accepts (best = 1); empty when it has no speed anywhere. */
export function normalisedSpeeds(st: CycleState, job: JobSpec, usable: (flavor: string) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  let best = 0;
  for (const f of job.flavors) {
    if (out.has(f) || !usable(f)) continue;
    const fl = st.flavors.get(f);
    if (fl === undefined) continue;
    const s = effectiveSpeed(job, fl);
    if (!(s > 0) || !Number.isFinite(s)) continue;
    out.set(f, s);
    if (s > best) best = s;
  }
  if (best <= 0) return new Map();
  for (const [f, s] of out) out.set(f, s / best);
  return out;
}
