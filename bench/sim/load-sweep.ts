import { runCycle } from '#core';
import { type ClusterSpec, type PolicyName, type SimInput, type SimJob, deriveTenancy, optimalCapacity, poissonArrivals, simulatePolicy } from '#sim';
import { loadavg } from 'node:os';
import { CHECKPOINT_SECONDS, GRACE_SECONDS, figures, input, round } from './sim-figures.js';

export interface LoadSweep {
  /** `scenario` of the JSON lines. */
  scenario: string;
  /** Fields printed right after `scenario` (seed, cluster shape, …). */
  labels?: Record<string, unknown>;
  jobs: readonly SimJob[];
  cluster: ClusterSpec;
  loads: readonly number[];
  /** Seed of the Poisson arrivals (the same for every load). */
  arrivalSeed: number;
  /** The policies asked for (BENCH_SIM_POLICIES); the sweep runs those of its own that are in it. */
  policies: readonly PolicyName[];
  /** Also `fastest-free` (the previous placement) with FIFO order. */
  fastestFree: boolean;
}

/**
 * The load sweep: the jobs, all in one queue (as in Gavel's simulations: placement alone differs between
 * the policies, no quota reclaim), re-timed as a Poisson stream whose rate is `load` × what the best
 * placement can serve (optimal-capacity.ts: the LP over the jobs' rates; load 1.0 = jobs arrive exactly
 * as fast as an ideal, time-shared, heterogeneity-aware fleet completes them). One JSON line per load:
 * mean JCT of `full` (relative-speed placement), `fastest-free` (the previous placement) and
 * `hetero-agnostic` (random flavor), the ratios agnostic ÷ aware, moves and lost accelerator-hours. Jobs
 * checkpoint every CHECKPOINT_SECONDS (an assumption, as in Gavel's rounds), so `full` moves running jobs
 * to faster flavors as they free up (moves.ts); no other policy moves. `full` and `hetero-agnostic` run
 * again with `ordering: 'shortest-first'` (the same order for both): the ratios agnostic FIFO ÷ ours
 * shortest-first and agnostic ÷ ours both shortest-first are reported apart. Returns the lines printed.
 */
export function loadSweep(s: LoadSweep): Record<string, unknown>[] {
  const jobs = s.jobs.map((j) => ({ ...j, team: 'gavel' }));
  const tenancy = deriveTenancy(['gavel'], { gavel: 1 }, s.cluster);
  const cap = optimalCapacity(jobs, s.cluster);
  const lines: Record<string, unknown>[] = [];
  for (const load of s.loads) {
    const timed = poissonArrivals(jobs, load * cap.jobsPerDayAtFullLoad, s.arrivalSeed);
    const base = input({ trace: { jobs: timed, rejected: [] }, cluster: s.cluster, tenancy, epochMs: 0 }, CHECKPOINT_SECONDS);
    const shortestFirst: SimInput = { ...base, config: { ...base.config, options: { ...base.config.options, ordering: 'shortest-first' } } };
    const runs: [string, SimInput, PolicyName][] = [
      ['full', base, 'full'],
      ...(s.fastestFree ? [['fastest-free', base, 'fastest-free'] as [string, SimInput, PolicyName]] : []),
      ['hetero-agnostic', base, 'hetero-agnostic'],
      ['full+shortest-first', shortestFirst, 'full'],
      ['hetero-agnostic+shortest-first', shortestFirst, 'hetero-agnostic'],
    ];
    const per: Record<string, Record<string, number>> = {};
    let wall = 0;
    for (const [name, inputOf, policy] of runs) {
      if (!s.policies.includes(policy)) continue;
      const run = simulatePolicy(inputOf, policy, runCycle);
      wall += run.wallSeconds;
      per[name] = figures(run);
      process.stderr.write(`${s.scenario} ${JSON.stringify(s.labels ?? {})} ${load} ${name}: wall ${run.wallSeconds.toFixed(1)} s, mean JCT ${per[name].meanJctHours} h\n`);
    }
    const jct = (p: string): number | undefined => per[p]?.meanJctHours;
    const ratio = (x: number | undefined, y: number | undefined): number | null => (x !== undefined && y !== undefined && y > 0 ? round(x / y, 3) : null);
    const line = {
      scenario: s.scenario,
      ...s.labels,
      load,
      jobs: jobs.length,
      jobsPerDay: round(load * cap.jobsPerDayAtFullLoad, 1),
      lpJobsPerDay: round(cap.jobsPerDayAtFullLoad, 1),
      typeBlindCapacityRatio: round(cap.jobsPerDayAtFullLoad / cap.typeBlindJobsPerDay, 3),
      awareMeanJctHours: jct('full'),
      fastestFreeMeanJctHours: jct('fastest-free'),
      agnosticMeanJctHours: jct('hetero-agnostic'),
      jctRatio: ratio(jct('hetero-agnostic'), jct('full')),
      jctRatioFastestFree: ratio(jct('hetero-agnostic'), jct('fastest-free')),
      awareShortestFirstMeanJctHours: jct('full+shortest-first'),
      agnosticShortestFirstMeanJctHours: jct('hetero-agnostic+shortest-first'),
      // agnostic (FIFO, the baseline) ÷ aware with shortest-first order: what the aware scheduler gains with both features.
      jctRatioShortestFirstVsFifoAgnostic: ratio(jct('hetero-agnostic'), jct('full+shortest-first')),
      // agnostic ÷ aware, both with shortest-first order: what heterogeneity awareness alone gains under that order.
      jctRatioShortestFirstBoth: ratio(jct('hetero-agnostic+shortest-first'), jct('full+shortest-first')),
      moves: per.full?.moves ?? 0,
      movesShortestFirst: per['full+shortest-first']?.moves ?? 0,
      checkpointSeconds: CHECKPOINT_SECONDS,
      graceSeconds: GRACE_SECONDS,
      // Jobs that never completed (a starved job would show here; 0 for every policy when all finished).
      unfinished: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.unfinished])),
      lostGpuHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.lostGpuHours])),
      makespanDays: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.makespanDays])),
      utilizationWhileQueued: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.utilizationWhileQueued])),
      meanWaitHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.meanWaitHours])),
      p99WaitHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.p99WaitHours])),
      wallSeconds: round(wall, 1),
      loadAverage1m: round(loadavg()[0]!, 1),
    };
    process.stdout.write(JSON.stringify(line) + '\n');
    lines.push(line);
  }
  return lines;
}
