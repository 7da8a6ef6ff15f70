import { seededRandom } from '#core';
import type { SimJob } from './types.js';

/**
 * The jobs, in their order, re-timed as a Poisson stream of `jobsPerDay` (seeded, so the same seed gives
 * the same times): the first arrives at 0, each gap is exponential with mean 86,400 ÷ `jobsPerDay`
 * seconds, times rounded to whole seconds. With `jobsPerDay` = load × `optimalCapacity(jobs,
 * cluster).jobsPerDayAtFullLoad` the jobs arrive at that load of the LP-optimal capacity (the load sweep).
 */
export function poissonArrivals(jobs: readonly SimJob[], jobsPerDay: number, seed: number): SimJob[] {
  if (!(jobsPerDay > 0)) throw new Error(`poissonArrivals: jobsPerDay must be positive, got ${jobsPerDay}`);
  const rnd = seededRandom(seed);
  const meanGap = 86_400 / jobsPerDay;
  let t = 0;
  return jobs.map((j) => {
    const at = t;
    t += -Math.log(1 - rnd()) * meanGap;
    return { ...j, submitSeconds: Math.round(at) };
  });
}
