import { describe, expect, it } from '@jest/globals';
import { buildCluster } from './cluster-file.js';
import { GAVEL_SCALE_FACTORS, gavelJobTypes, generateGavelJobs } from './gavel-generator.js';
import { parseGavelThroughputs } from './gavel-trace.js';
import { optimalCapacity } from './optimal-capacity.js';
import { poissonArrivals } from './poisson-arrivals.js';

// Two distributed types (measured at 1, 2, 4, 8 workers) and one that is not (1 only, cannot run on K80).
const entry = (v: number): { null: number } => ({ null: v });
const table = (rate: (type: string, scale: number) => number): Record<string, { null: number }> => {
  const out: Record<string, { null: number }> = {};
  for (const t of ['Dist-A', 'Dist-B']) for (const s of [1, 2, 4, 8]) out[`('${t}', ${s})`] = entry(rate(t, s));
  out["('Single', 1)"] = entry(rate('Single', 1));
  return out;
};
const tp = parseGavelThroughputs(
  JSON.stringify({
    v100: table((t, s) => (t === 'Dist-A' ? 10 : 4) * s),
    p100: table((t, s) => (t === 'Dist-A' ? 5 : 3) * s),
    k80: table((t, s) => (t === 'Single' ? 0 : (t === 'Dist-A' ? 1 : 2) * s)),
  }),
  't.json',
);

const minutesOnV100 = (j: { work: number; rates: Record<string, number> }): number => j.work / j.rates.v100! / 60;

describe('Gavel-style trace generator', () => {
  it('lists the table’s job types by name, distributed when measured at a scale > 1', () => {
    expect(gavelJobTypes(tp)).toEqual([
      { type: 'Dist-A', distributed: true },
      { type: 'Dist-B', distributed: true },
      { type: 'Single', distributed: false },
    ]);
  });

  it('is deterministic: the same seed gives the same jobs, another seed other jobs', () => {
    const a = generateGavelJobs({ throughputs: tp, count: 200, seed: 11 });
    expect(generateGavelJobs({ throughputs: tp, count: 200, seed: 11 })).toEqual(a);
    const b = generateGavelJobs({ throughputs: tp, count: 200, seed: 12 });
    expect(b.map((j) => j.work)).not.toEqual(a.map((j) => j.work));
    expect(a[0]!.id).toBe('generated-001');
    expect(new Set(a.map((j) => j.id)).size).toBe(200);
  });

  it('draws scale factors in Gavel’s proportions, multi-GPU jobs only of distributed types, rates from the table', () => {
    const jobs = generateGavelJobs({ throughputs: tp, count: 20_000, seed: 3 });
    for (const { scale, probability } of GAVEL_SCALE_FACTORS) {
      const share = jobs.filter((j) => j.replicas * j.acceleratorsPerReplica === scale).length / jobs.length;
      expect(Math.abs(share - probability)).toBeLessThan(0.015);
    }
    expect(jobs.filter((j) => j.acceleratorsPerReplica > 1).every((j) => j.label !== 'Single')).toBe(true);
    const single = jobs.find((j) => j.label === 'Single')!;
    expect(single).toMatchObject({ flavors: ['v100', 'p100'], rates: { v100: 4, p100: 3 }, replicas: 1, acceleratorsPerReplica: 1 });
    const eight = jobs.find((j) => j.label === 'Dist-A' && j.acceleratorsPerReplica === 8)!;
    expect(eight).toMatchObject({ flavors: ['v100', 'p100', 'k80'], rates: { v100: 80, p100: 40, k80: 8 } });
    // Job types are drawn uniformly among those allowed: single-GPU jobs spread over all three.
    const ones = jobs.filter((j) => j.acceleratorsPerReplica === 1);
    for (const t of ['Dist-A', 'Dist-B', 'Single']) expect(Math.abs(ones.filter((j) => j.label === t).length / ones.length - 1 / 3)).toBeLessThan(0.02);
  });

  it('takes other scale factors: above 8 GPUs a gang of 8-GPU replicas, its rates extrapolated from 8', () => {
    const jobs = generateGavelJobs({ throughputs: tp, count: 50, seed: 4, scaleFactors: [{ scale: 16, probability: 1 }] });
    expect(jobs.every((j) => j.replicas === 2 && j.acceleratorsPerReplica === 8 && j.label !== 'Single')).toBe(true);
    expect(jobs.find((j) => j.label === 'Dist-A')).toMatchObject({ rates: { v100: 160, p100: 80, k80: 16 } });
  });

  it('draws V100 run times from Gavel’s distributions (log-uniform 10^2–10^4 min; Philly: 80 % 10^1.5–10^3, 20 % 10^3–10^4)', () => {
    const log = generateGavelJobs({ throughputs: tp, count: 20_000, seed: 5, durations: 'log-uniform' }).map(minutesOnV100);
    expect(Math.min(...log)).toBeGreaterThanOrEqual(99.9);
    expect(Math.max(...log)).toBeLessThanOrEqual(10_000.1);
    // Log-uniform: half the jobs below 10^3 minutes, a quarter below 10^2.5.
    expect(Math.abs(log.filter((m) => m < 1000).length / log.length - 0.5)).toBeLessThan(0.015);
    expect(Math.abs(log.filter((m) => m < 10 ** 2.5).length / log.length - 0.25)).toBeLessThan(0.015);
    const philly = generateGavelJobs({ throughputs: tp, count: 20_000, seed: 5, durations: 'philly' }).map(minutesOnV100);
    expect(Math.min(...philly)).toBeGreaterThanOrEqual(10 ** 1.5 - 0.1);
    expect(Math.max(...philly)).toBeLessThanOrEqual(10_000.1);
    expect(Math.abs(philly.filter((m) => m < 1000).length / philly.length - 0.8)).toBeLessThan(0.015);
  });

  it('times the jobs as a seeded Poisson stream at a load of the LP-optimal capacity', () => {
    const cluster = buildCluster(
      ['v100', 'p100', 'k80'].map((name) => ({ name, kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 })),
      ['v100', 'p100', 'k80'].map((flavor) => ({ flavor, count: 2, acceleratorsPerNode: 8 })),
    );
    const jobs = generateGavelJobs({ throughputs: tp, count: 5_000, seed: 9 });
    const perDay = 0.8 * optimalCapacity(jobs, cluster).jobsPerDayAtFullLoad;
    const timed = poissonArrivals(jobs, perDay, 9);
    expect(poissonArrivals(jobs, perDay, 9)).toEqual(timed);
    expect(timed[0]!.submitSeconds).toBe(0);
    expect(timed.every((j, i) => i === 0 || j.submitSeconds >= timed[i - 1]!.submitSeconds)).toBe(true);
    const meanGap = timed[timed.length - 1]!.submitSeconds / (timed.length - 1);
    expect(Math.abs(meanGap / (86_400 / perDay) - 1)).toBeLessThan(0.05);
    expect(timed.map((j) => ({ ...j, submitSeconds: 0 }))).toEqual(jobs);
  });
});
