import type { ClusterSpec, SimJob } from './types.js';

/**
 * The most work per unit of time a heterogeneous fleet can do for a job mix, with the best possible
 * (fractional, time-shared) placement: the LP Gavel's load figures are measured against.
 *
 * Jobs are grouped into classes (same acceptable flavors, gang size and rates). For each class c and
 * flavor f, y_cf accelerators serve it; a gang of a_c accelerators does r_cf work units per second on
 * f, so y_cf accelerators do y_cf·r_cf/a_c. The LP finds the largest θ (copies of the whole job set per
 * day) such that every class gets θ × its total work per day and no flavor gives more than it has:
 *
 *     maximise θ   s.t.   θ·W_c − Σ_f y_cf·r_cf/a_c·86400 ≤ 0  (every class c),
 *                         Σ_c y_cf ≤ C_f                       (every flavor f),   θ, y ≥ 0.
 *
 * So the whole job set takes at best 1/θ days of the fleet. Offered load at an arrival rate of
 * λ jobs/day is λ ÷ (θ·N): 1.0 means the jobs arrive exactly as fast as the best placement can serve them.
 * Gangs, topology and the non-preemptive order are ignored, so no real policy reaches load 1.0 unqueued.
 */
export interface OptimalCapacity {
  /** Copies of the job set the fleet completes per day at best. */
  jobSetsPerDay: number;
  /** Jobs per day at load 1.0 (θ × number of jobs). */
  jobsPerDayAtFullLoad: number;
  /** The same figure for a placement that ignores speeds (each class spread over its flavors in proportion to their size). */
  typeBlindJobsPerDay: number;
  classes: number;
}

interface JobClass {
  flavors: string[];
  /** Work units per accelerator-second on each flavor. */
  perAccelerator: Record<string, number>;
  work: number;
}

const DAY = 86_400;

export function optimalCapacity(jobs: readonly SimJob[], cluster: ClusterSpec): OptimalCapacity {
  const capacity = new Map<string, number>();
  for (const n of cluster.nodes) if (n.schedulable) capacity.set(n.flavor, (capacity.get(n.flavor) ?? 0) + n.accelerators);
  const flavors = [...capacity.keys()].sort();
  const classes = new Map<string, JobClass>();
  for (const j of jobs) {
    const a = j.replicas * j.acceleratorsPerReplica;
    const fs = j.flavors.filter((f) => capacity.has(f) && (j.rates[f] ?? 0) > 0).sort();
    if (fs.length === 0) continue;
    const key = fs.map((f) => `${f}:${j.rates[f]! / a}`).join(',');
    const c = classes.get(key);
    if (c !== undefined) c.work += j.work;
    else classes.set(key, { flavors: fs, perAccelerator: Object.fromEntries(fs.map((f) => [f, j.rates[f]! / a])), work: j.work });
  }
  const list = [...classes.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([, c]) => c);
  if (list.length === 0) return { jobSetsPerDay: 0, jobsPerDayAtFullLoad: 0, typeBlindJobsPerDay: 0, classes: 0 };

  // Variables: θ, then y_cf for each class and acceptable flavor. Rows: one per class, one per flavor.
  const cols: { c: number; f: string }[] = [];
  list.forEach((c, ci) => c.flavors.forEach((f) => cols.push({ c: ci, f })));
  const n = 1 + cols.length;
  const rows: number[][] = [];
  const rhs: number[] = [];
  list.forEach((c, ci) => {
    const row = new Array<number>(n).fill(0);
    // Normalised by the class's work so that every coefficient is of order 1.
    row[0] = 1;
    cols.forEach((col, k) => {
      if (col.c === ci) row[k + 1] = -(c.perAccelerator[col.f]! * DAY) / c.work;
    });
    rows.push(row);
    rhs.push(0);
  });
  for (const f of flavors) {
    const row = new Array<number>(n).fill(0);
    cols.forEach((col, k) => {
      if (col.f === f) row[k + 1] = 1;
    });
    rows.push(row);
    rhs.push(capacity.get(f)!);
  }
  const objective = new Array<number>(n).fill(0);
  objective[0] = 1;
  const theta = maximise(objective, rows, rhs);

  // Type-blind: each class's accelerator-time split over its flavors in proportion to their capacity.
  // Its work rate per accelerator is then the capacity-weighted mean; the fleet is shared so that every
  // class progresses at the same θ: Σ_c θ·W_c / rate_c ≤ Σ C (one pool), i.e. θ = ΣC ÷ Σ_c W_c/rate_c.
  let seconds = 0;
  let pool = 0;
  for (const f of flavors) pool += capacity.get(f)!;
  for (const c of list) {
    let cap = 0;
    let rate = 0;
    for (const f of c.flavors) {
      cap += capacity.get(f)!;
      rate += capacity.get(f)! * c.perAccelerator[f]!;
    }
    seconds += c.work / (rate / cap);
  }
  const blind = seconds > 0 ? (pool * DAY) / seconds : 0;
  return { jobSetsPerDay: theta, jobsPerDayAtFullLoad: theta * jobs.length, typeBlindJobsPerDay: blind * jobs.length, classes: list.length };
}

/**
 * max cᵀx s.t. Ax ≤ b, x ≥ 0 with b ≥ 0 (the origin is feasible): a dense tableau simplex with
 * Bland's rule (no cycling). Returns the optimal objective; throws when unbounded.
 */
export function maximise(c: readonly number[], a: readonly (readonly number[])[], b: readonly number[]): number {
  const m = a.length;
  const n = c.length;
  const eps = 1e-12;
  // Tableau rows: [A | I | b]; objective row: [-c | 0 | 0].
  const t: number[][] = a.map((row, i) => {
    const r = new Array<number>(n + m + 1).fill(0);
    for (let j = 0; j < n; j++) r[j] = row[j]!;
    r[n + i] = 1;
    r[n + m] = b[i]!;
    return r;
  });
  const z = new Array<number>(n + m + 1).fill(0);
  for (let j = 0; j < n; j++) z[j] = -c[j]!;
  const basis = Array.from({ length: m }, (_, i) => n + i);
  for (let iter = 0; iter < 50_000; iter++) {
    let enter = -1;
    for (let j = 0; j < n + m; j++) {
      if (z[j]! < -eps) {
        enter = j;
        break;
      }
    }
    if (enter < 0) return z[n + m]!;
    let leave = -1;
    let best = Infinity;
    for (let i = 0; i < m; i++) {
      const x = t[i]![enter]!;
      if (x > eps) {
        const ratio = t[i]![n + m]! / x;
        if (ratio < best - eps || (Math.abs(ratio - best) <= eps && leave >= 0 && basis[i]! < basis[leave]!)) {
          best = ratio;
          leave = i;
        }
      }
    }
    if (leave < 0) throw new Error('LP is unbounded');
    const pr = t[leave]!;
    const pv = pr[enter]!;
    for (let j = 0; j <= n + m; j++) pr[j]! /= pv;
    for (let i = 0; i < m; i++) {
      if (i === leave) continue;
      const row = t[i]!;
      const f = row[enter]!;
      if (f === 0) continue;
      for (let j = 0; j <= n + m; j++) row[j]! -= f * pr[j]!;
    }
    const fz = z[enter]!;
    for (let j = 0; j <= n + m; j++) z[j]! -= fz * pr[j]!;
    basis[leave] = enter;
  }
  throw new Error('LP did not converge');
}
