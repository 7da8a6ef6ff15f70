import { type GavelDurations, type PolicyName, GAVEL_DURATIONS, GAVEL_SCALE_FACTORS, gavelCluster, generateGavelJobs, parseGavelThroughputs, readText } from '#sim';
import { join } from 'node:path';
import { loadSweep } from './load-sweep.js';
import { round } from './sim-figures.js';

/** Cluster shapes of the unseen-workload check: Gavel's own, and one skewed towards V100 with few P100. */
export const UNSEEN_SHAPES = {
  gavel: { v100: 36, p100: 36, k80: 36 },
  skewed: { v100: 48, p100: 24, k80: 36 },
} as const;
export type UnseenShape = keyof typeof UNSEEN_SHAPES;
const isShape = (s: string): s is UnseenShape => s in UNSEEN_SHAPES;

/**
 * Gang sizes: Gavel's generator (1/2/4/8 GPUs), or msr_seed0's own mix, with the 16- and 32-GPU gangs that
 * span nodes (counted over its 15,264 jobs: 1 68.7 %, 2 3.0 %, 4 13.4 %, 8 12.6 %, 16 1.7 %, 32 0.6 %; the
 * 0.1 % of other sizes left out).
 */
export const UNSEEN_SCALES = {
  gavel: GAVEL_SCALE_FACTORS,
  msr: [
    { scale: 1, probability: 0.687 },
    { scale: 2, probability: 0.03 },
    { scale: 4, probability: 0.134 },
    { scale: 8, probability: 0.126 },
    { scale: 16, probability: 0.017 },
    { scale: 32, probability: 0.006 },
  ],
} as const;
type UnseenScales = keyof typeof UNSEEN_SCALES;

/** The ratios summarised over seeds (min / median / max), and the mean JCTs behind them. */
const SUMMARISED = [
  'jctRatio',
  'jctRatioShortestFirstVsFifoAgnostic',
  'jctRatioShortestFirstBoth',
  'awareMeanJctHours',
  'agnosticMeanJctHours',
  'awareShortestFirstMeanJctHours',
  'agnosticShortestFirstMeanJctHours',
] as const;

function spread(values: number[]): { min: number; median: number; max: number } {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length % 2 === 1 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  return { min: v[0]!, median: round(mid, 3), max: v[v.length - 1]! };
}

/**
 * `gavel-unseen`: the load sweep (load-sweep.ts, unchanged policies) on workloads the policies were never
 * tuned on — Gavel-style generated traces (gavel-generator.ts), one per seed, on each cluster shape. One
 * JSON line per (shape, seed, load) with the sweep's fields, then one `gavel-unseen-summary` line per
 * (shape, load): min / median / max over the seeds of the ratios and mean JCTs. Arrivals use the
 * generator's seed. Environment: BENCH_SIM_UNSEEN_SEEDS (default 1,2,3), BENCH_SIM_UNSEEN_JOBS (1000),
 * BENCH_SIM_UNSEEN_SHAPES (gavel,skewed), BENCH_SIM_UNSEEN_DURATIONS (philly | log-uniform; philly),
 * BENCH_SIM_UNSEEN_SCALES (gavel | msr; gavel).
 */
export function gavelUnseen(dir: string, loads: readonly number[], policies: readonly PolicyName[]): void {
  const seeds = (process.env.BENCH_SIM_UNSEEN_SEEDS ?? '1,2,3').split(',').map(Number);
  const count = Number(process.env.BENCH_SIM_UNSEEN_JOBS ?? 1000);
  const shapes = (process.env.BENCH_SIM_UNSEEN_SHAPES ?? 'gavel,skewed').split(',').filter(isShape);
  const durations = (process.env.BENCH_SIM_UNSEEN_DURATIONS ?? 'philly') as GavelDurations;
  if (!GAVEL_DURATIONS.includes(durations)) throw new Error(`BENCH_SIM_UNSEEN_DURATIONS: expected one of ${GAVEL_DURATIONS.join(', ')}, got '${durations}'`);
  const scales = (process.env.BENCH_SIM_UNSEEN_SCALES ?? 'gavel') as UnseenScales;
  if (!(scales in UNSEEN_SCALES)) throw new Error(`BENCH_SIM_UNSEEN_SCALES: expected one of ${Object.keys(UNSEEN_SCALES).join(', ')}, got '${scales}'`);
  const throughputs = parseGavelThroughputs(readText(join(dir, 'gavel', 'simulation_throughputs.json'), 'Gavel throughputs'), 'simulation_throughputs.json');
  for (const shape of shapes) {
    const cluster = gavelCluster(UNSEEN_SHAPES[shape]);
    const lines = seeds.flatMap((seed) =>
      loadSweep({
        scenario: 'gavel-unseen',
        labels: { shape, accelerators: UNSEEN_SHAPES[shape], seed, durations, scales },
        jobs: generateGavelJobs({ throughputs, count, seed, durations, scaleFactors: UNSEEN_SCALES[scales] }),
        cluster,
        loads,
        arrivalSeed: seed,
        policies,
        fastestFree: false,
      }),
    );
    for (const load of loads) {
      const at = lines.filter((l) => l.load === load);
      const summary: Record<string, unknown> = { scenario: 'gavel-unseen-summary', shape, accelerators: UNSEEN_SHAPES[shape], durations, scales, load, seeds, jobs: count };
      for (const field of SUMMARISED) {
        const values = at.map((l) => l[field]).filter((v): v is number => typeof v === 'number');
        if (values.length > 0) summary[field] = spread(values);
      }
      process.stdout.write(JSON.stringify(summary) + '\n');
    }
  }
}
