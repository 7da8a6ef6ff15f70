import { describe, expect, it } from '@jest/globals';
import { buildCluster } from './cluster-file.js';
import { maximise, optimalCapacity } from './optimal-capacity.js';
import type { SimJob } from './types.js';

const flavors = [
  { name: 'fast', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 },
  { name: 'slow', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 0.5, costPerHour: 1 },
];
const cluster = buildCluster(flavors, [
  { flavor: 'fast', count: 1, acceleratorsPerNode: 8 },
  { flavor: 'slow', count: 1, acceleratorsPerNode: 8 },
]);

const job = (id: string, rates: Record<string, number>, work: number): SimJob => ({
  id,
  line: 1,
  source: 't',
  team: 'a',
  submitSeconds: 0,
  replicas: 1,
  acceleratorsPerReplica: 1,
  flavors: Object.keys(rates),
  work,
  rates,
  priority: 0,
  preemptible: true,
});

describe('optimal capacity (the LP behind the load figures)', () => {
  it('simplex: max x + y with x ≤ 2, y ≤ 3, x + y ≤ 4 is 4', () => {
    expect(maximise([1, 1], [[1, 0], [0, 1], [1, 1]], [2, 3, 4])).toBeCloseTo(4, 9);
  });

  it('one kind of job: every placement is as good, the fleet does 8×2 + 8×1 units per second', () => {
    const c = optimalCapacity([job('a', { fast: 2, slow: 1 }, 86_400 * 24)], cluster);
    expect(c.jobSetsPerDay).toBeCloseTo(1, 9);
    expect(c.typeBlindJobsPerDay).toBeCloseTo(1, 9);
  });

  it('two kinds: the best placement gives the fast flavor to the job with the larger advantage there', () => {
    // A: 10× faster on fast; B: 1.25×. Equal work. Best: A on fast (80/s), B on slow (8/s) — balanced by θ.
    const jobs = [job('a', { fast: 10, slow: 1 }, 1_000_000), job('b', { fast: 1.25, slow: 1 }, 1_000_000)];
    const c = optimalCapacity(jobs, cluster);
    // B alone on slow: 8 units/s → 1e6 units in 125,000 s; A needs only 12,500 s of fast. With the spare
    // fast time shared, the LP does better than 125,000 s per job set: ≥ 86,400 / 125,000 sets per day.
    expect(c.jobSetsPerDay).toBeGreaterThan(86_400 / 125_000);
    expect(c.jobSetsPerDay).toBeGreaterThan(c.typeBlindJobsPerDay / jobs.length);
    expect(c.classes).toBe(2);
  });
});
