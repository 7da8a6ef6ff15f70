/**
 * Per-cycle flavor prices for relative-speed placement (Gavel's throughput-normalised view).
 *
 * Every pending job is a bidder (the demand the fleet must place as capacity frees; running work is
 * committed and counted by the wait estimates instead): it accepts some flavors and runs on each
 * at a normalised speed s_f = speed_f ÷ its best speed (so 1 on its fastest flavor, 0.09 for a model 11×
 * slower on a K80). The prices λ_f are the dual of the "most normalised throughput" allocation
 *
 *     maximise Σ_j a_j Σ_f x_jf s_jf   s.t.   Σ_j a_j x_jf ≤ C_f,   Σ_f x_jf ≤ 1,   x ≥ 0
 *
 * (a_j = the job's accelerators × its expected runtime, C_f = the flavor's schedulable accelerators × a
 * horizon long enough for the longest pending job and the whole backlog): λ_f is zero while a
 * flavor is not oversubscribed, and otherwise the premium its accelerators command. A job's value of a
 * flavor is then u_f = s_f − λ_f; its *home* is the flavor of greatest value: the fast flavor goes to the
 * jobs whose relative advantage there is largest, a slow flavor to the jobs that lose least on it.
 *
 * The dual is minimised by coordinate descent: with the other prices fixed, the optimal λ_f is the
 * smallest price at which the jobs still preferring f fit in C_f (each job bids t_j = s_f − its best
 * alternative value). Jobs with the same acceptable flavors and normalised speeds are one class, so a
 * round costs O(classes × flavors), and the rounds stop when the prices settle (at most MAX_ROUNDS).
 * Everything is sorted before use: the prices depend only on the snapshot.
 */
import type { CycleState } from './cycle-state.js';
import { effectiveSpeed } from './flavor-selection.js';
import type { JobSpec } from './model.js';

const MAX_ROUNDS = 25;
const SETTLED = 1e-9;

interface BidderClass {
  /** Indexes into the market's flavors, and the normalised speed on each. */
  flavors: number[];
  speeds: number[];
  /** Σ accelerator-seconds of its jobs. */
  weight: number;
}

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

/** The prices of this cycle, from the pending jobs (a job that does not choose by speed bids only for its first flavor). */
export function buildMarket(st: CycleState): FlavorMarket {
  const names = [...st.flavors.keys()].filter((f) => (st.cluster.flavor(f)?.totalAllocatable ?? 0) > 0);
  const idx = new Map(names.map((n, i) => [n, i]));
  const capacity = names.map((n) => st.cluster.flavor(n)!.totalAllocatable);
  const classes = new Map<string, BidderClass>();
  const usable = (f: string): boolean => idx.has(f);
  const add = (job: JobSpec, accelerators: number, only?: string): void => {
    if (!Number.isFinite(accelerators)) return;
    let key: string;
    let flavors: number[];
    let speeds: number[];
    if (only !== undefined) {
      const i = idx.get(only);
      if (i === undefined) return;
      key = only;
      flavors = [i];
      speeds = [1];
    } else {
      const s = normalisedSpeeds(st, job, usable);
      if (s.size === 0) return;
      const sorted = [...s].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
      key = sorted.map(([f, v]) => `${f}=${v}`).join(',');
      flavors = sorted.map(([f]) => idx.get(f)!);
      speeds = sorted.map(([, v]) => v);
    }
    const c = classes.get(key);
    if (c === undefined) classes.set(key, { flavors, speeds, weight: accelerators });
    else c.weight += accelerators;
  };
  // Bids weigh accelerators × expected runtime (on the job's best flavor); the supply is each flavor's
  // accelerators over a horizon H long enough for the longest pending job and for the whole backlog
  // (pending and running work) on the whole fleet, so a queue that the fleet serves in turn is no contention.
  const defaultRuntime = st.snapshot.options.defaultExpectedRuntimeSeconds;
  let longest = 0;
  let backlog = 0;
  for (const j of st.snapshot.pending) {
    const rt = j.expectedRuntimeSeconds ?? defaultRuntime;
    const w = j.acceleratorsPerReplica * j.minReplicas * (Number.isFinite(rt) && rt > 0 ? rt : 0);
    if (!(w > 0)) continue;
    longest = Math.max(longest, Number.isFinite(rt) ? rt : 0);
    backlog += w;
    if (j.flavorSelection === 'fastest') add(j, w);
    else if (j.flavors.length > 0) add(j, w, j.flavors[0]);
  }
  for (const f of names) for (const h of st.timeline(f)) if (!h.removed) backlog += h.accelerators * Math.max(0, (h.end - st.now) / 1000);
  const fleet = capacity.reduce((x, y) => x + y, 0);
  const horizon = Math.max(longest, fleet > 0 ? backlog / fleet : 0);
  for (let f = 0; f < capacity.length; f++) capacity[f] = capacity[f]! * horizon;
  const list = [...classes.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map(([, c]) => c);
  const prices = names.map(() => 0);
  const byFlavor: BidderClass[][] = names.map(() => []);
  for (const c of list) for (const f of c.flavors) byFlavor[f]!.push(c);
  const bids: { t: number; w: number }[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let moved = 0;
    for (let f = 0; f < names.length; f++) {
      bids.length = 0;
      for (const c of byFlavor[f]!) {
        let alt = 0;
        let own = 0;
        for (let k = 0; k < c.flavors.length; k++) {
          const g = c.flavors[k]!;
          if (g === f) own = c.speeds[k]!;
          else alt = Math.max(alt, c.speeds[k]! - prices[g]!);
        }
        const t = own - alt;
        if (t > 0) bids.push({ t, w: c.weight });
      }
      bids.sort((x, y) => y.t - x.t);
      let cum = 0;
      let next = 0;
      for (const b of bids) {
        if (cum + b.w > capacity[f]!) {
          next = b.t;
          break;
        }
        cum += b.w;
      }
      moved = Math.max(moved, Math.abs(next - prices[f]!));
      prices[f] = next;
    }
    if (moved < SETTLED) break;
  }
  return new FlavorMarket(names, prices);
}
