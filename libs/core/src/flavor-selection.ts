/**
 * The order in which a job's acceptable flavors are tried (each first without preemption, then with):
 * - `preference`: as the job lists them;
 * - `fastest`: effective speed descending — `job.speeds[f]` when given, else the flavor's
 *   `relativeSpeed` — ties in listed order;
 * - `random` (only as `options.flavorSelectionOverride`, the simulator's heterogeneity-agnostic policy):
 *   a shuffle by a PRNG seeded from `options.seed` and the job id, so it is deterministic too.
 */
import type { Flavor, JobSpec, SchedulerOptions } from './model.js';

/** mulberry32: a small deterministic PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string, as an unsigned 32-bit integer. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Effective speed of `flavor` for `job`. */
export function effectiveSpeed(job: JobSpec, flavor: Flavor): number {
  const s = job.speeds?.[flavor.name];
  return typeof s === 'number' && Number.isFinite(s) ? s : flavor.relativeSpeed;
}

/**
 * Expected runtime of `job` on `flavor`, seconds (null = unknown). For a job that declares `speeds`,
 * `expectedRuntimeSeconds` is its runtime on its fastest acceptable flavor, so on a flavor of effective
 * speed s it takes `expectedRuntimeSeconds × best ÷ s`; without `speeds` the runtime is the same everywhere.
 */
export function runtimeOn(job: JobSpec, flavor: string, flavors: ReadonlyMap<string, Flavor>): number | null {
  const rt = job.expectedRuntimeSeconds;
  if (rt === null || job.speeds === undefined || job.speeds === null) return rt;
  const own = flavors.get(flavor);
  if (own === undefined) return rt;
  const s = effectiveSpeed(job, own);
  let best = s;
  const listed = job.flavors;
  // A job of one flavor (most): the loop would only meet `own` again, and max(s, s) = s.
  if (listed.length !== 1 || listed[0] !== flavor) {
    for (const f of listed) {
      const fl = flavors.get(f);
      if (fl !== undefined) best = Math.max(best, effectiveSpeed(job, fl));
    }
  }
  return s > 0 && Number.isFinite(best) ? (rt * best) / s : rt;
}

/** The job's flavors (duplicates dropped) in the order to try them. All must exist in `flavors`. */
export function flavorOrder(job: JobSpec, flavors: ReadonlyMap<string, Flavor>, options: SchedulerOptions): string[] {
  const listed = [...new Set(job.flavors)];
  const how = options.flavorSelectionOverride ?? job.flavorSelection;
  switch (how) {
    case 'preference':
      return listed;
    case 'fastest':
      return listed
        .map((f, i) => ({ f, i, s: effectiveSpeed(job, flavors.get(f)!) }))
        .sort((x, y) => y.s - x.s || x.i - y.i)
        .map((x) => x.f);
    case 'random': {
      const rnd = seededRandom(((options.seed ?? 0) ^ hashString(job.id)) >>> 0);
      const out = [...listed];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    }
  }
}
