import type { SimJob } from './types.js';

/**
 * Jobs that know their speed on each flavor list only the flavors where they run at least `floor` ×
 * their best rate (0 < floor ≤ 1; 0 = keep all). This is what a heterogeneity-aware submitter does
 * with measured throughputs (a model 11× slower on a K80 waits for a V100 rather than run there); a
 * heterogeneity-agnostic world cannot do it, because nobody knows the rates.
 */
export function applySpeedFloor(jobs: SimJob[], floor: number): SimJob[] {
  if (!(floor > 0)) return jobs;
  return jobs.map((job) => {
    let best = 0;
    for (const f of job.flavors) best = Math.max(best, job.rates[f] ?? 0);
    const kept = job.flavors.filter((f) => (job.rates[f] ?? 0) >= floor * best);
    return kept.length === job.flavors.length ? job : { ...job, flavors: kept };
  });
}
