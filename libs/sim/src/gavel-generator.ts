import { seededRandom } from '#core';
import { GAVEL_ACCELERATORS, type GavelThroughputs, gavelRates } from './gavel-trace.js';
import type { SimJob } from './types.js';
import { gangShape } from './validate.js';

/**
 * Run-time distributions of Gavel's job generator (scheduler/utils.py), in minutes:
 * - `log-uniform`: 10^U(2, 4) (100 min to ~7 days) — its default;
 * - `philly`: 10^U(1.5, 3) with probability 0.8, else 10^U(3, 4) — its "Philly distribution".
 */
export const GAVEL_DURATIONS = ['log-uniform', 'philly'] as const;
export type GavelDurations = (typeof GAVEL_DURATIONS)[number];

/** Scale factors (workers) and their probabilities, as Gavel draws them ("the Philly distribution"). */
export const GAVEL_SCALE_FACTORS: readonly { scale: number; probability: number }[] = [
  { scale: 1, probability: 0.7 },
  { scale: 2, probability: 0.1 },
  { scale: 4, probability: 0.15 },
  { scale: 8, probability: 0.05 },
];

export interface GavelGeneratorOptions {
  throughputs: GavelThroughputs;
  count: number;
  seed: number;
  durations?: GavelDurations;
  /** Scale factors and their probabilities (summing to 1; default GAVEL_SCALE_FACTORS). Above 8: gangs of 8-GPU replicas, rates extrapolated linearly. */
  scaleFactors?: readonly { scale: number; probability: number }[];
  /** Every job's team (default `generated`). */
  team?: string;
  /** Gavel accelerator type → cluster flavor name (default: same name). */
  flavorOf?: Record<string, string>;
}

/** The job types of the table and whether they run distributed (measured at a scale > 1 on V100), by name. */
export function gavelJobTypes(tp: GavelThroughputs): { type: string; distributed: boolean }[] {
  const types = new Map<string, boolean>();
  for (const key of Object.keys(tp.v100 ?? {})) {
    const m = /^\('(.*)', (\d+)\)$/.exec(key);
    if (m === null) continue;
    types.set(m[1]!, (types.get(m[1]!) ?? false) || Number(m[2]) > 1);
  }
  return [...types.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([type, distributed]) => ({ type, distributed }));
}

/**
 * A synthetic Gavel workload, the way Gavel's own generator makes one (seeded: the same options give
 * the same jobs): a scale factor from GAVEL_SCALE_FACTORS (or `scaleFactors`), a run time on V100 from `durations`, then a
 * job type drawn uniformly from the throughput table, again until it runs distributed when the scale is
 * > 1. Work = run time × the type's V100 steps/s at that scale (whole steps); its rates on every type
 * come from the table (gavel-trace.ts), as for a traced job. Every job arrives at 0: time them with
 * `poissonArrivals` at a load of `optimalCapacity`. Three independent streams (scale, run time, type)
 * so that changing one distribution does not reshuffle the others.
 */
export function generateGavelJobs(options: GavelGeneratorOptions): SimJob[] {
  const { throughputs: tp, count, seed } = options;
  const durations = options.durations ?? 'philly';
  const team = options.team ?? 'generated';
  const scaleFactors = options.scaleFactors ?? GAVEL_SCALE_FACTORS;
  if (scaleFactors.length === 0) throw new Error('generateGavelJobs: no scale factors');
  const types = gavelJobTypes(tp);
  if (types.length === 0) throw new Error('generateGavelJobs: the throughputs table has no V100 job types');
  const scaleRnd = seededRandom(seed >>> 0);
  const durationRnd = seededRandom((seed ^ 0x5bd1e995) >>> 0);
  const typeRnd = seededRandom((seed ^ 0x27d4eb2f) >>> 0);
  const uniform = (rnd: () => number, lo: number, hi: number): number => lo + (hi - lo) * rnd();
  const pad = String(count).length;
  const source = `generated:seed=${seed}:${durations}`;
  const jobs: SimJob[] = [];
  for (let i = 0; i < count; i++) {
    let scale = scaleFactors[scaleFactors.length - 1]!.scale;
    let r = scaleRnd();
    for (const s of scaleFactors) {
      if (r < s.probability) {
        scale = s.scale;
        break;
      }
      r -= s.probability;
    }
    const minutes = durations === 'log-uniform' ? 10 ** uniform(durationRnd, 2, 4) : durationRnd() < 0.8 ? 10 ** uniform(durationRnd, 1.5, 3) : 10 ** uniform(durationRnd, 3, 4);
    let type: { type: string; distributed: boolean };
    do type = types[Math.floor(typeRnd() * types.length)]!;
    while (scale > 1 && !type.distributed);
    const measured = gavelRates(tp, type.type, scale, options.flavorOf);
    const reference = measured?.rates[options.flavorOf?.[GAVEL_ACCELERATORS[0]] ?? GAVEL_ACCELERATORS[0]];
    if (measured === undefined || reference === undefined) throw new Error(`generateGavelJobs: '${type.type}' at scale ${scale} has no V100 throughput`);
    jobs.push({
      id: `${team}-${String(i + 1).padStart(pad, '0')}`,
      line: i + 1,
      source,
      team,
      submitSeconds: 0,
      ...gangShape(scale),
      flavors: measured.flavors,
      work: Math.max(1, Math.round(minutes * 60 * reference)),
      rates: measured.rates,
      priority: 0,
      preemptible: true,
      label: type.type,
    });
  }
  return jobs;
}
