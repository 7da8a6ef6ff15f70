import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { DEFAULT_OPTIONS, type Flavor, runCycle, seededRandom } from '#core';
import { buildCluster } from './cluster-file.js';
import type { PolicyName } from './policies.js';
import { simulatePolicy } from './simulate.js';
import { deriveTenancy } from './tenancy-file.js';
import type { SimInput, SimJob } from './types.js';

/**
 * The simulated figures are pinned: a seeded synthetic trace, contended enough for reclaim preemptions,
 * reservations, checkpoints, grace periods and moves, replayed through the real core, must give exactly
 * the outcomes (every job's start, end, flavor, preemptions, moves, held and lost accelerator-seconds),
 * the allocation step function and the metrics that it gave before the simulator was made faster
 * (issue #12: "without changing any result"). A digest per setting; the wall-clock figures (`cycles`,
 * `coreMillis`, slowest cycle) are left out. When a change of the core or of the engine changes results
 * on purpose, recompute them (the failure message prints the new digest) and say why in the commit.
 */
const FLAVORS: Flavor[] = [
  { name: 'fast', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 3 },
  { name: 'slow', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 0.5, costPerHour: 1 },
];

function trace(jobs: number, twoFlavors: boolean, seed: number, meanGapSeconds: number, workMax: number): SimJob[] {
  const rnd = seededRandom(seed);
  const out: SimJob[] = [];
  let t = 0;
  for (let i = 0; i < jobs; i++) {
    t += Math.round(-Math.log(1 - rnd()) * meanGapSeconds);
    const gpus = [1, 1, 1, 2, 4, 8, 8, 16, 32][Math.floor(rnd() * 9)]!;
    const replicas = gpus > 8 ? gpus / 8 : 1;
    const flavors = twoFlavors ? (rnd() < 0.2 ? ['fast'] : ['fast', 'slow']) : ['fast'];
    const rates: Record<string, number> = { fast: 1 };
    if (flavors.includes('slow')) rates.slow = 0.3 + Math.floor(rnd() * 5) / 10;
    out.push({
      id: `j${String(i).padStart(5, '0')}`,
      line: i + 2,
      source: 'synthetic',
      team: ['a', 'b', 'c'][Math.floor(rnd() * 3)]!,
      submitSeconds: t,
      replicas,
      acceleratorsPerReplica: gpus / replicas,
      flavors,
      work: Math.round(60 + rnd() * rnd() * workMax),
      rates,
      priority: rnd() < 0.1 ? 1 : 0,
      preemptible: rnd() < 0.9,
    });
  }
  return out;
}

function input(twoFlavors: boolean, config: Partial<SimInput['config']> = {}): SimInput {
  const cluster = twoFlavors
    ? buildCluster(FLAVORS, [
        { flavor: 'fast', count: 2, acceleratorsPerNode: 8 },
        { flavor: 'slow', count: 5, acceleratorsPerNode: 8 },
      ])
    : buildCluster([FLAVORS[0]!], [{ flavor: 'fast', count: 7, acceleratorsPerNode: 8 }]);
  return {
    trace: { jobs: twoFlavors ? trace(300, true, 11, 900, 20_000) : trace(400, false, 7, 400, 8000), rejected: [] },
    cluster,
    tenancy: deriveTenancy(['a', 'b', 'c'], { a: 3, b: 2, c: 1 }, cluster),
    config: { cycleIntervalSeconds: 10, checkpointIntervalSeconds: 0, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS }, ...config },
    epochMs: 1_700_000_000_000,
  };
}

function digest(sim: SimInput, policy: PolicyName): string {
  const { result: r, metrics } = simulatePolicy(sim, policy, runCycle);
  const figures = {
    jobs: r.jobs,
    unfinished: r.unfinished,
    rejected: r.rejected,
    allocation: r.allocation,
    preemptionTimes: r.preemptionTimes,
    endSeconds: r.endSeconds,
    maxPending: r.maxPending,
    queuedSeconds: r.queuedSeconds,
    utilizationWhileQueued: r.utilizationWhileQueued,
    overall: { ...metrics.overall, coreSeconds: 0, cycles: 0 },
    teams: metrics.teams,
  };
  return createHash('sha256').update(JSON.stringify(figures)).digest('hex').slice(0, 24);
}

describe('replay identity (simulated figures pinned on a synthetic trace)', () => {
  // Re-pinned (all but no-preemption, which preempts nothing) when a preempted job began to pay its restart
  // (moves.restartSeconds, 300 s) on being admitted again, as a moved one does.
  // All that preempt re-pinned when victims began to be chosen as the cheapest sufficient set (victim-search.ts);
  // all re-pinned again when every job outcome began to carry its demand (demandAcceleratorSeconds), the
  // simulator began to tell the core when a running job was last preempted (no thrashing), and what a victim
  // holds through its grace period stopped being offered to others before it ends (terminating.ts); all again
  // when a job that may not be preempted stopped borrowing (a tenth of the trace's jobs are such); one-per-queue
  // again when each borrower's victims came to be listed smallest first.
  const cases: [string, () => SimInput, PolicyName, string][] = [
    ['one flavor, full (preemptions lose all)', () => input(false), 'full', '0186461fcf19406d77657693'],
    ['one flavor, no-preemption', () => input(false), 'no-preemption', 'd1e2f2b7d0afc6bb5904a84d'],
    ['one flavor, full, checkpoints every 30 min', () => input(false, { checkpointIntervalSeconds: 1800 }), 'full', '5566ae35606be49cd3037fd8'],
    ['one flavor, one-per-queue', () => input(false), 'one-per-queue', 'dfc05281204c69816c7dcc73'],
    [
      'one flavor, full, 10 min before preemption, cycles at each change',
      () => input(false, { cycleIntervalSeconds: 0, options: { ...DEFAULT_OPTIONS, minRuntimeBeforePreemptionSeconds: 600 } }),
      'full',
      'b9a95461c66db104a6a665be',
    ],
    // Re-pinned again when relative-speed placement began to weigh the delay a slower run causes the others
    // (options.slowerFlavorDelayWeight), and when the flavor prices began to count running jobs' accelerators
    // (flavor-market.ts), a busy fastest flavor stayed the home when waiting for it finishes sooner, and the
    // weight's default became 3.
    ['two flavors, full, checkpoints every 10 min with a 60 s grace period (moves)', () => input(true, { checkpointIntervalSeconds: 600, checkpointGraceSeconds: 60 }), 'full', '504fbdf91254bcf4167da62c'],
    ['two flavors, hetero-agnostic', () => input(true), 'hetero-agnostic', '8d6ce19f50998b3d4075b799'],
  ];
  it.each(cases)('%s', (_name, make, policy, expected) => {
    expect(digest(make(), policy)).toBe(expected);
  });

  it('the setups exercise what they pin: preemptions, lost work, moves and waiting jobs', () => {
    const full = simulatePolicy(input(false), 'full', runCycle).metrics.overall;
    expect(full.preemptions).toBeGreaterThan(0);
    expect(full.lostAcceleratorHours).toBeGreaterThan(0);
    expect(full.queueingDelaySeconds.p99).toBeGreaterThan(0);
    const moved = simulatePolicy(input(true, { checkpointIntervalSeconds: 600, checkpointGraceSeconds: 60 }), 'full', runCycle).metrics.overall;
    expect(moved.moves).toBeGreaterThan(0);
  });
});
