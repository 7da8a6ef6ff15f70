/**
 * Per-cycle flavor prices for relative-speed placement (Gavel's throughput-normalised view).
 *
 * Every job in the system is a bidder: the pending ones, and the running ones, which hold their flavor now;
 * those that may move to another (moves.ts `movable`, moves on) bid as pending ones do. A job accepts some
 * flavors and runs on each at a normalised speed s_f = speed_f ÷ its best speed (so 1 on its fastest flavor,
 * 0.09 for a model 11× slower on a K80). The prices λ_f are the dual of the "most normalised throughput" allocation at this instant
 *
 *     maximise Σ_j a_j Σ_f x_jf s_jf   s.t.   Σ_j a_j x_jf ≤ C_f,   Σ_f x_jf ≤ 1,   x ≥ 0
 *
 * (a_j = the job's accelerators, C_f = the flavor's schedulable accelerators): λ_f is zero while no more
 * accelerators want a flavor than it has, and otherwise the premium its accelerators command. A job's value
 * of a flavor is then u_f = s_f − λ_f; its *home* is the flavor of greatest value: the fast flavor goes to
 * the jobs whose relative advantage there is largest, a slow flavor to the jobs that lose least on it. A job
 * that does not choose by speed bids only for its first flavor; a running one that may not move, only for the
 * flavor it runs on.
 *
 * (Until 2026-12 bids weighed accelerators × runtime against a horizon as long as the longest pending job:
 * with one multi-week job waiting, no flavor was ever dear, every job's home was the fastest flavor, and
 * the slow ones idled while the queue grew. Gavel sweep at load 1.0, FIFO: agnostic ÷ aware 1.54 → 1.82.)
 *
 * The dual is minimised by coordinate descent: with the other prices fixed, the optimal λ_f is the
 * smallest price at which the jobs still preferring f fit in C_f (each job bids t_j = s_f − its best
 * alternative value). Jobs with the same acceptable flavors and normalised speeds are one class, so a
 * round costs O(classes × flavors), and the rounds stop when the prices settle (at most MAX_ROUNDS).
 * Everything is sorted before use: the prices depend only on the snapshot.
 */
import type { CycleState } from './cycle-state.js';
import type { JobSpec } from './model.js';
import { FlavorMarket, normalisedSpeeds } from './flavor-prices.js';
import { movable, moveOptions } from './moves.js';
import { minAccelerators } from './roles.js';

const MAX_ROUNDS = 25;
const SETTLED = 1e-9;

interface BidderClass {
  /** Indexes into the market's flavors, and the normalised speed on each. */
  flavors: number[];
  speeds: number[];
  /** Σ accelerators of its jobs. */
  weight: number;
}

/** The prices of this cycle, from the pending and running jobs (see above). */
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
  // Every job in the system bids with its accelerators: the pending ones, and the running ones, which hold
  // their flavor now — those that may move (moves.ts: checkpointing, preemptible) bid as if waiting, the others
  // only for the flavor they run on. The supply is each flavor's accelerators: a flavor is
  // oversubscribed when more accelerators want it than it has (Gavel's allocation view, at this instant).
  for (const j of st.snapshot.pending) {
    const w = minAccelerators(j);
    if (!(w > 0)) continue;
    if (j.flavorSelection === 'fastest') add(j, w);
    else if (j.flavors.length > 0) add(j, w, j.flavors[0]);
  }
  const movesOn = moveOptions(st).maxPerCycle > 0;
  for (const r of st.snapshot.running) {
    const w = r.placement.reduce((sum, p) => sum + p.accelerators, 0);
    if (!(w > 0)) continue;
    if (movesOn && movable(st, r)) add(r, w);
    else add(r, w, r.flavor);
  }
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
