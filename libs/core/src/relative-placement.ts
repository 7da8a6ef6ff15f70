/**
 * Relative-speed placement: where a job that accepts several flavors (`flavorSelection: 'fastest'`)
 * runs, when `options.flavorPlacement` is `relative-speed` (the default).
 *
 * 1. Value. Each acceptable flavor f is worth u_f = s_f − λ_f to the job: its normalised speed there
 *    minus the flavor's price this cycle (flavor-market.ts, from the accelerators the pending and running
 *    jobs want). Flavors are tried by
 *    value, highest first (ties: cheaper, then faster, then listed order); the first is the job's *home*.
 * 2. Home first. If the job fits on its home flavor now, it starts there.
 * 3. Another flavor g that fits now is taken only when the job is expected to finish sooner there:
 *    now + runtime_g < earliest start on the home flavor + runtime_home. The earliest start comes from
 *    the home flavor's free capacity and release timeline, after the jobs ahead of it in this cycle that
 *    wait for that flavor (WaitBook). And it must finish sooner by more than the delay its slower run causes
 *    the others: the extra accelerator-time it holds on g (accelerators × (runtime_g − runtime_home)) is
 *    capacity of g that the other pending jobs accepting g wait for, ~ that ÷ g's accelerators each, so the
 *    gain must exceed weight × (other pending jobs that accept g) × extra ÷ (g's accelerators)
 *    (`options.slowerFlavorDelayWeight`, default 3: the delay also reaches the jobs that arrive while the
 *    queue lasts, which no snapshot shows; measured on the Gavel load sweep, 1 to 16 tried). On an
 *    idle fleet that is nothing; with a queue, a job no longer takes a K80 for ten times its V100 runtime to
 *    finish an hour sooner. Otherwise the job waits for its home flavor, and its reason says so.
 *    The home itself is the flavor of greatest value unless the job's fastest flavor is busy and waiting
 *    for it is expected to finish the job sooner (`fasterHome`): then the fastest is.
 * Preemption and reservations then consider the home flavor and flavors within NEAR of its value.
 *
 * With `flavorPlacement: 'fastest-free'` (the previous behaviour, kept to compare), the flavors are
 * tried fastest first and the first that fits is taken.
 */
import type { CycleState } from './cycle-state.js';
import { type FlavorMarket, normalisedSpeeds } from './flavor-prices.js';
import { runtimeOn } from './flavor-selection.js';
import type { JobSpec, PendingJob } from './model.js';
import { minAccelerators } from './roles.js';

/** Values closer than this (in normalised speed) count as indifferent. */
export const NEAR = 0.05;

export interface RelativePlan {
  /** Usable flavors by value, highest first; `order[0]` is the home. */
  order: string[];
  home: string;
  /** Normalised speed and value of each flavor in `order`. */
  speed: Map<string, number>;
  value: Map<string, number>;
}

/** Whether relative-speed placement applies to `job` in this cycle. */
export function placesByRelativeSpeed(st: CycleState, job: JobSpec): boolean {
  const opts = st.snapshot.options;
  if (opts.flavorSelectionOverride !== undefined) return false;
  if ((opts.flavorPlacement ?? 'relative-speed') !== 'relative-speed') return false;
  return job.flavorSelection === 'fastest' && job.flavors.length > 1;
}

/**
 * The job's flavors by value. `open` are the flavors it may try (listed order, not blocked); those the
 * team can never use on this fleet (no quota) are left to the caller's failures and put last.
 */
export function relativePlan(st: CycleState, market: FlavorMarket, job: JobSpec, open: readonly string[]): RelativePlan | undefined {
  const usable = new Set(open.filter((f) => (st.cluster.flavor(f)?.totalAllocatable ?? 0) > 0 && st.quota.get(job.team, f)?.implicit === false));
  const speed = normalisedSpeeds(st, job, (f) => usable.has(f));
  if (speed.size < 2) return undefined;
  const listed = new Map(job.flavors.map((f, i) => [f, i] as const));
  const value = new Map<string, number>();
  for (const [f, s] of speed) value.set(f, s - market.price(f));
  // At the margin a job is indifferent between the flavor whose price it set and a cheaper one: the cheaper wins.
  const order = [...speed.keys()].sort(
    (x, y) =>
      value.get(y)! - value.get(x)! || market.price(x) - market.price(y) || speed.get(y)! - speed.get(x)! || listed.get(x)! - listed.get(y)!,
  );
  for (const f of open) if (!speed.has(f)) order.push(f);
  return { order, home: order[0]!, speed, value };
}

/**
 * The plan, with its fastest flavor as the home when that is busy now and waiting for it is expected to
 * finish the job sooner than its flavor of greatest value would (each from when it frees for the job, after
 * the jobs ahead of it in this cycle that wait for it). The prices weigh who should hold a contended flavor
 * at this instant, running jobs included; they do not see that it frees in an hour while the slow run takes
 * days. A fastest flavor free now goes by value. The other flavors keep their order.
 */
export function fasterHome(st: CycleState, waits: WaitBook, plan: RelativePlan, job: PendingJob): RelativePlan {
  let fastest = plan.home;
  for (const f of plan.order) if ((plan.speed.get(f) ?? 0) > (plan.speed.get(fastest) ?? 0)) fastest = f;
  if (fastest === plan.home) return plan;
  const need = minAccelerators(job);
  const fastStart = waits.earliestStart(fastest, need);
  // Free now, the fastest flavor goes by value: its price is what the others waiting give up for it.
  if (fastStart <= st.now) return plan;
  const valued = waits.earliestStart(plan.home, need) + runtimeMs(st, job, plan.home);
  const fast = fastStart + runtimeMs(st, job, fastest);
  if (!(fast < valued)) return plan;
  return { ...plan, order: [fastest, ...plan.order.filter((f) => f !== fastest)], home: fastest };
}

/** Whether the job is all but indifferent between its home flavor and `flavor`. */
export function nearHome(plan: RelativePlan, flavor: string): boolean {
  const v = plan.value.get(flavor);
  return v !== undefined && v >= plan.value.get(plan.home)! - NEAR;
}

/**
 * Earliest starts on each flavor for the jobs left waiting in this cycle, in queue order: each flavor is
 * a pool of accelerators that frees as running and admitted work ends (by expected end) and serves the
 * waiting jobs first come, first served, each holding its accelerators for its expected runtime there.
 * Topology and fragmentation are ignored in this estimate.
 */
export class WaitBook {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly st: CycleState) {}

  /** A job of `accelerators` running `runtime` ms waits for `flavor` (after those already waiting). */
  claim(flavor: string, accelerators: number, runtime: number): void {
    const p = this.pool(flavor);
    if (p !== undefined && accelerators > 0) p.take(accelerators, runtime, true);
  }

  /** Epoch ms at which `need` accelerators of `flavor` are expected free for a job behind those waiting. */
  earliestStart(flavor: string, need: number): number {
    return this.pool(flavor)?.take(need, 0, false) ?? Infinity;
  }

  private pool(flavor: string): Pool | undefined {
    let p = this.pools.get(flavor);
    if (p === undefined) {
      const fl = this.st.cluster.flavor(flavor);
      if (fl === undefined) return undefined;
      p = new Pool(this.st.now, fl.totalFree);
      for (const h of this.st.timeline(flavor)) if (!h.removed) p.push(h.end, h.accelerators);
      this.pools.set(flavor, p);
    }
    return p;
  }
}

/** Free accelerators at time `t` and future releases (a binary min-heap by time). */
class Pool {
  private readonly at: number[] = [];
  private readonly n: number[] = [];

  constructor(
    private t: number,
    private free: number,
  ) {}

  push(at: number, n: number): void {
    let i = this.at.length;
    this.at.push(at);
    this.n.push(n);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at[parent]! <= at) break;
      this.at[i] = this.at[parent]!;
      this.n[i] = this.n[parent]!;
      i = parent;
    }
    this.at[i] = at;
    this.n[i] = n;
  }

  private pop(): { at: number; n: number } | undefined {
    if (this.at.length === 0) return undefined;
    const top = { at: this.at[0]!, n: this.n[0]! };
    const lastAt = this.at.pop()!;
    const lastN = this.n.pop()!;
    const size = this.at.length;
    if (size > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) break;
        const r = l + 1;
        const c = r < size && this.at[r]! < this.at[l]! ? r : l;
        if (this.at[c]! >= lastAt) break;
        this.at[i] = this.at[c]!;
        this.n[i] = this.n[c]!;
        i = c;
      }
      this.at[i] = lastAt;
      this.n[i] = lastN;
    }
    return top;
  }

  /**
   * When `need` accelerators are free (releases taken in time order). With `commit`, they are taken
   * from then and given back `runtime` ms later; without, the pool is left as it was.
   */
  take(need: number, runtime: number, commit: boolean): number {
    const popped: { at: number; n: number }[] = [];
    let t = this.t;
    let free = this.free;
    while (free < need) {
      const r = this.pop();
      if (r === undefined) break;
      popped.push(r);
      free += r.n;
      t = Math.max(t, r.at);
    }
    if (free < need) {
      for (const r of popped) this.push(r.at, r.n);
      return Infinity;
    }
    if (!commit) {
      for (const r of popped) this.push(r.at, r.n);
      return t;
    }
    this.t = t;
    this.free = free - need;
    if (Number.isFinite(runtime)) this.push(t + runtime, need);
    return t;
  }
}

/** Expected runtime in ms on `flavor` (the default runtime when the job gives none). */
export function runtimeMs(st: CycleState, job: PendingJob, flavor: string): number {
  return (runtimeOn(job, flavor, st.flavors) ?? st.snapshot.options.defaultExpectedRuntimeSeconds) * 1000;
}

/**
 * The cycle's pending jobs counted by the flavors they accept (one count per distinct list): the others a slower
 * run can delay are those that accept the slower flavor — a V100-only or TPU job does not wait for a job's K80s.
 */
export class PendingByFlavors {
  private readonly lists: { flavors: readonly string[]; count: number }[] = [];

  constructor(pending: readonly PendingJob[]) {
    const byKey = new Map<string, { flavors: readonly string[]; count: number }>();
    for (const j of pending) {
      if (!Array.isArray(j.flavors)) continue;
      const key = j.flavors.join('\u0000');
      const entry = byKey.get(key);
      if (entry !== undefined) entry.count++;
      else byKey.set(key, { flavors: j.flavors, count: 1 });
    }
    this.lists = [...byKey.values()];
  }

  /** Pending jobs that accept at least one of `flavors`. */
  accepting(flavors: readonly string[]): number {
    let n = 0;
    for (const l of this.lists) if (l.flavors.some((f) => flavors.includes(f))) n += l.count;
    return n;
  }
}

/** `options.slowerFlavorDelayWeight`, or its default (3) when absent or not a finite number ≥ 0. */
export function slowerFlavorDelayWeight(options: { slowerFlavorDelayWeight?: number }): number {
  const w = options.slowerFlavorDelayWeight;
  return typeof w === 'number' && Number.isFinite(w) && w >= 0 ? w : DEFAULT_SLOWER_FLAVOR_DELAY_WEIGHT;
}

export const DEFAULT_SLOWER_FLAVOR_DELAY_WEIGHT = 3;

/** Starting now on `flavor` against waiting for the home flavor (epoch ms), and what the slower run costs the others. */
export interface SoonerVerdict {
  sooner: boolean;
  /** Expected end starting on `flavor` now, and waiting for the home flavor. */
  here: number;
  home: number;
  /** The other jobs' summed delay (ms, weighted) from the slower run: what `home − here` must exceed. */
  othersDelay: number;
  /** The other pending jobs that accept the slower flavor, and the extra accelerator-ms the slower run holds there. */
  others: number;
  extraAcceleratorMs: number;
}

/**
 * Whether `job` is expected to finish sooner starting on `flavor` now than waiting for its home flavor, by more
 * than the delay its slower run causes the other pending jobs (see 3. above).
 */
export function finishesSooner(
  st: CycleState,
  waits: WaitBook,
  plan: RelativePlan,
  job: PendingJob,
  flavor: string,
  /** The cycle's pending jobs by the flavors they accept, built once per cycle (Heterogeneity in cycle.ts). */
  pending: PendingByFlavors,
): SoonerVerdict {
  const need = minAccelerators(job);
  const runHere = runtimeMs(st, job, flavor);
  const runHome = runtimeMs(st, job, plan.home);
  const here = st.now + runHere;
  const home = waits.earliestStart(plan.home, need) + runHome;
  const others = Math.max(0, pending.accepting([flavor]) - 1);
  const extraAcceleratorMs = need * Math.max(0, runHere - runHome);
  const accelerators = st.cluster.flavor(flavor)?.totalAllocatable ?? 0;
  const weight = slowerFlavorDelayWeight(st.snapshot.options);
  const othersDelay = weight > 0 && others > 0 && extraAcceleratorMs > 0 ? (weight * others * extraAcceleratorMs) / Math.max(1, accelerators) : 0;
  return { sooner: here < home && home - here > othersDelay, here, home, othersDelay, others, extraAcceleratorMs };
}
