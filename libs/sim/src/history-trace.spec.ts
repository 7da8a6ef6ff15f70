import { describe, expect, it } from '@jest/globals';
import { historyToTrace, type JobHistoryRow } from './history-trace.js';

const H = 3_600_000;
const since = Date.UTC(2026, 10, 23);
const now = since + 168 * H;
const flavors = [
  { name: 'h100-80gb', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 2, costPerHour: 4 },
  { name: 'a100-40gb', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 2 },
];
const row = (over: Partial<JobHistoryRow>): JobHistoryRow => ({
  id: 'uuid',
  team: 'vision',
  priority: 0,
  preemptible: true,
  replicas: 1,
  acceleratorsPerReplica: 8,
  flavors: ['h100-80gb', 'a100-40gb'],
  speeds: null,
  expectedRuntimeSeconds: null,
  checkpoint: null,
  resumeFraction: null,
  state: 'PENDING',
  flavor: null,
  submittedAt: new Date(since + H),
  startedAt: null,
  finishedAt: null,
  ...over,
});

describe('historyToTrace', () => {
  it('measures finished jobs on the flavor they ran on, so they run faster or slower elsewhere', () => {
    const t = historyToTrace([row({ state: 'SUCCEEDED', flavor: 'a100-40gb', startedAt: new Date(since + 2 * H), finishedAt: new Date(since + 4 * H) })], flavors, since, now);
    // 2 h on an a100 (rate 1) = 7200 units; an h100 (rate 2) would take 1 h.
    expect(t.jobs[0]).toMatchObject({ submitSeconds: 3600, work: 7200, rates: { 'h100-80gb': 2, 'a100-40gb': 1 } });
  });

  it('uses measured per-job speeds, expected runtimes for waiting jobs, and at least the elapsed time for running ones', () => {
    const t = historyToTrace(
      [
        row({ speeds: { 'h100-80gb': 3 }, expectedRuntimeSeconds: 600 }),
        row({ state: 'RUNNING', flavor: 'h100-80gb', startedAt: new Date(now - H), expectedRuntimeSeconds: 60 }),
        row({ expectedRuntimeSeconds: null }),
      ],
      flavors,
      since,
      now,
    );
    expect(t.jobs.map((j) => j.work)).toEqual([600 * 3, 3600 * 2, 3600 * 2]);
  });

  it('lists jobs that ended without starting as rejected, with the reason', () => {
    const t = historyToTrace([row({ id: 'abc', state: 'CANCELLED', finishedAt: new Date(since + 2 * H) })], flavors, since, now);
    expect(t.jobs).toEqual([]);
    expect(t.rejected).toEqual([{ line: 1, source: 'db job abc', reason: 'cancelled before it started' }]);
  });

  it('starts from the state at since: a job running then holds its flavor with the work left after since; one waiting then is queued with its submission time', () => {
    const t = historyToTrace(
      [
        row({ state: 'SUCCEEDED', flavor: 'a100-40gb', submittedAt: new Date(since - 5 * H), startedAt: new Date(since - 3 * H), finishedAt: new Date(since + 2 * H) }),
        row({ state: 'RUNNING', flavor: 'h100-80gb', submittedAt: new Date(since - 2 * H), startedAt: new Date(since - H), expectedRuntimeSeconds: 60 }),
        row({ state: 'PENDING', submittedAt: new Date(since - 4 * H), expectedRuntimeSeconds: 600 }),
      ],
      flavors,
      since,
      now,
    );
    expect(t.jobs[0]).toMatchObject({ submitSeconds: -5 * 3600, work: 2 * 3600, runningAtStart: { flavor: 'a100-40gb', startSeconds: -3 * 3600 } });
    // Still running now: it has run 169 h, 168 of them after since, on an h100 (rate 2).
    expect(t.jobs[1]).toMatchObject({ submitSeconds: -2 * 3600, work: 168 * 3600 * 2, runningAtStart: { flavor: 'h100-80gb', startSeconds: -3600 } });
    expect(t.jobs[2]).toMatchObject({ submitSeconds: -4 * 3600, work: 600 * 2 });
    expect(t.jobs[2]!.runningAtStart).toBeUndefined();
  });

  it('gives a job requeued from a checkpoint only the work after it (expected runtime × (1 − resumeFraction)), waiting or running again', () => {
    const checkpoint = { intervalSeconds: 600, gracePeriodSeconds: 60 };
    const t = historyToTrace(
      [
        // Preempted at 75 % and waiting again: 1,000 of its 4,000 s are left, 2,000 units on an h100 (rate 2).
        row({ state: 'PENDING', checkpoint, resumeFraction: 0.75, expectedRuntimeSeconds: 4000 }),
        // Running again since 10 min before now from its 50 % checkpoint: 2,000 s expected (more than the 600 s so far).
        row({ state: 'RUNNING', flavor: 'a100-40gb', checkpoint, resumeFraction: 0.5, expectedRuntimeSeconds: 4000, startedAt: new Date(now - H / 6) }),
        // A fraction without a checkpoint policy is not resumed from (as in the scheduler's snapshot).
        row({ state: 'PENDING', resumeFraction: 0.75, expectedRuntimeSeconds: 4000 }),
      ],
      flavors,
      since,
      now,
    );
    expect(t.jobs.map((j) => j.work)).toEqual([1000 * 2, 2000 * 1, 4000 * 2]);
  });
});
