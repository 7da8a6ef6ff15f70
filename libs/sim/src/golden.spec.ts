import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OPTIONS, runCycle } from '#core';
import { parseClusterFile } from './cluster-file.js';
import { jainIndex } from './metrics.js';
import { parsePhillyCsv } from './philly-trace.js';
import type { PolicyName } from './policies.js';
import { simulatePolicy } from './simulate.js';
import { parseTenancyFile } from './tenancy-file.js';
import type { SimInput } from './types.js';

/**
 * A four-job golden trace through the real core (testdata/golden-*), every figure computed by hand.
 * Cluster: 2 nodes × 8 GPUs. Teams a and b, nominal 8 each, one cohort (unlimited borrowing).
 *   line 2  a  t=0    8 GPUs  100 s
 *   line 3  a  t=0    8 GPUs   50 s   (borrows b's idle 8)
 *   line 4  a  t=10  16 GPUs   40 s   (waits for both nodes)
 *   line 5  b  t=120  4 GPUs   30 s   (b is under its nominal while a borrows)
 */
const testdata = (name: string): string => readFileSync(fileURLToPath(new URL(`./testdata/${name}`, import.meta.url)), 'utf8');

function goldenInput(): SimInput {
  const cluster = parseClusterFile(testdata('golden-cluster.yaml'), 'golden-cluster.yaml');
  const trace = parsePhillyCsv(testdata('golden-philly.csv'), { source: 'golden-philly.csv', flavors: cluster.flavors });
  return {
    trace,
    cluster,
    tenancy: parseTenancyFile(testdata('golden-tenancy.yaml'), 'golden-tenancy.yaml', cluster),
    // No restart cost (moves.restartSeconds 0): the hand-computed figures are in seconds, and engine.spec covers it.
    config: { cycleIntervalSeconds: 0, checkpointIntervalSeconds: 0, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS, moves: { restartSeconds: 0 } } },
    epochMs: trace.epochMs,
  };
}

const run = (policy: PolicyName) => simulatePolicy(goldenInput(), policy, runCycle);

describe('golden trace (real core)', () => {
  it('full: the 16-GPU gang starts at 100, is preempted at 120 when b reclaims its nominal, and restarts at 150', () => {
    const { result, metrics } = run('full');
    const byLine = Object.fromEntries(result.jobs.map((j) => [j.id, j]));
    expect(byLine['philly-2']).toMatchObject({ firstStartSeconds: 0, endSeconds: 100, preemptions: 0 });
    expect(byLine['philly-3']).toMatchObject({ firstStartSeconds: 0, endSeconds: 50 });
    // Waits 10 → 100; runs 100–120 (20 s × 16 GPUs lost); b's job runs 120–150; restarts 150–190.
    expect(byLine['philly-4']).toMatchObject({ firstStartSeconds: 100, endSeconds: 190, preemptions: 1, lostAcceleratorSeconds: 320 });
    expect(byLine['philly-5']).toMatchObject({ firstStartSeconds: 120, endSeconds: 150 });

    const o = metrics.overall;
    // Delays 0, 0, 90, 0; JCTs 100, 50, 180, 30.
    expect(o.queueingDelaySeconds).toEqual({ count: 4, mean: 22.5, median: 0, p99: 90, max: 90 });
    expect(o.jctSeconds).toEqual({ count: 4, mean: 90, median: 50, p99: 180, max: 180 });
    // Held: a = 800 + 400 + 320 + 640 = 2160, b = 120 GPU-s; 2280 / (16 GPUs × 190 s).
    expect(o.utilization).toBeCloseTo(2280 / 3040, 12);
    // Someone waits during 10–100 (16 GPUs held until 50, then 8) and 120–150 (4 held): 1160 / (120 s × 16).
    expect(o.utilizationWhileQueued).toBeCloseTo(1160 / 1920, 12);
    expect(o.preemptions).toBe(1);
    expect(o.lostAcceleratorHours).toBeCloseTo(320 / 3600, 12);
    expect(o.largeGang).toEqual({ minAccelerators: 32, jobs: 0, longestWaitSeconds: 0, meanWaitSeconds: 0 });
    // Quota shares ½ and ½: x_a = (2160/2280)/0.5, x_b = (120/2280)/0.5.
    const xa = 2160 / 2280 / 0.5;
    const xb = 120 / 2280 / 0.5;
    expect(o.jainFairness).toBeCloseTo((xa + xb) ** 2 / (2 * (xa * xa + xb * xb)), 12);
    expect(metrics.teams.a!.preemptions).toBe(1);
    expect(metrics.teams.b!.jctSeconds.mean).toBe(30);
    expect(metrics.byGangSize['16']).toEqual({ jobs: 1, meanJctSeconds: 180, meanQueueingDelaySeconds: 90 });
  });

  it('fifo (no preemption): b waits for the gang to finish at 140', () => {
    const { result, metrics } = run('fifo');
    const byLine = Object.fromEntries(result.jobs.map((j) => [j.id, j]));
    expect(byLine['philly-4']).toMatchObject({ firstStartSeconds: 100, endSeconds: 140, preemptions: 0 });
    expect(byLine['philly-5']).toMatchObject({ firstStartSeconds: 140, endSeconds: 170 });
    expect(metrics.overall.queueingDelaySeconds.mean).toBe((0 + 0 + 90 + 20) / 4);
    expect(metrics.overall.jctSeconds.mean).toBe((100 + 50 + 130 + 50) / 4);
    // 800 + 400 + 640 + 120 = 1960 GPU-s over 16 × 170.
    expect(metrics.overall.utilization).toBeCloseTo(1960 / 2720, 12);
    // Waiting during 10–100 (1040 GPU-s held) and 120–140 (16 held): 1360 / (110 s × 16).
    expect(metrics.overall.utilizationWhileQueued).toBeCloseTo(1360 / 1760, 12);
    expect(metrics.overall.jainFairness).toBeCloseTo(jainIndex([1840 / 1960 / 0.5, 120 / 1960 / 0.5]), 12);
  });

  it('is deterministic: the same input gives the same outcome', () => {
    expect(run('full').result.jobs).toEqual(run('full').result.jobs);
  });
});
