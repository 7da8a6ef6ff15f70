import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, startHarness } from './harness.js';

/**
 * The victim order over REST (issue #26): preemption takes the set that loses the least work, not the
 * largest gang. Each case starts the jobs it needs, lets a cycle admit them, and reads the preempting
 * cycle's answer and the jobs' states through the API.
 */
let h: Harness;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const state = async (id: string): Promise<string> => ((await ok('GET', `/v1/jobs/${id}`)) as { state: string }).state;

beforeAll(async () => {
  h = await startHarness('api_victim_order');
  await ok('PUT', '/v1/cohorts/research', { description: 'research pool' });
  await ok('PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 1, costPerHour: 4 });
  // vision owns the fleet (40); nlp owns nothing and borrows whatever vision leaves idle.
  await ok('PUT', '/v1/teams/vision', { cohort: 'research', preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } });
  await ok('PUT', '/v1/teams/nlp', { cohort: 'research' });
  await ok('PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 40, borrowingLimit: 0, lendingLimit: null });
  await ok('PUT', '/v1/teams/nlp/quotas/h100-80gb', { nominal: 0, borrowingLimit: null, lendingLimit: null });
  for (let i = 1; i <= 5; i++) {
    await ok('PUT', `/v1/nodes/gpu-${i}`, { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1' } });
  }
});
afterAll(async () => {
  await h.close();
});

const gang = (name: string, team: string, priority: number, replicas: number): Record<string, unknown> =>
  jobBody({ name, team, priority, replicas, acceleratorsPerReplica: 8 });

describe('preemption takes the least work, not the largest gang', () => {
  it('a 1 × 8 job of higher priority evicts the 8-GPU job, not the 32-GPU gang admitted with it', async () => {
    const big = await ok('POST', '/v1/jobs', gang('big-32', 'vision', 0, 4));
    const small = await ok('POST', '/v1/jobs', gang('small-8', 'vision', 0, 1));
    await ok('POST', '/v1/scheduler/cycles');
    expect([await state(big.id), await state(small.id)]).toEqual(['ADMITTED', 'ADMITTED']);
    const urgent = await ok('POST', '/v1/jobs', gang('urgent', 'vision', 10, 1));
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.preemptions).toEqual([expect.objectContaining({ victimJobId: small.id, preemptorJobId: urgent.id })]);
    expect([await state(big.id), await state(small.id), await state(urgent.id)]).toEqual(['ADMITTED', 'PENDING', 'ADMITTED']);
    for (const j of [big, small, urgent]) await ok('DELETE', `/v1/jobs/${j.id}`);
    await ok('POST', '/v1/scheduler/cycles');
  });

  it("a reclaim that needs 8 takes the borrower's newer 8-GPU job, not its older 16-GPU one, and says how much was lent", async () => {
    // vision leaves 24 idle at first: nlp borrows 16 (older), then 8 more (newer) in a later cycle.
    const own = await ok('POST', '/v1/jobs', gang('vision-own', 'vision', 0, 2));
    const older = await ok('POST', '/v1/jobs', gang('older-16', 'nlp', 0, 2));
    await ok('POST', '/v1/scheduler/cycles');
    const newer = await ok('POST', '/v1/jobs', gang('newer-8', 'nlp', 0, 1));
    await ok('POST', '/v1/scheduler/cycles');
    expect([await state(own.id), await state(older.id), await state(newer.id)]).toEqual(['ADMITTED', 'ADMITTED', 'ADMITTED']);
    // vision wants 8 more, within its nominal: the fleet is full, so it reclaims.
    const back = await ok('POST', '/v1/jobs', gang('vision-back', 'vision', 0, 1));
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.preemptions).toEqual([
      expect.objectContaining({
        victimJobId: newer.id,
        preemptorJobId: back.id,
        kind: 'ReclaimWithinCohort',
        message: 'preempted by a job of team vision (priority 0 = 0, reclaim policy Any) to reclaim 8 h100-80gb lent to team nlp',
      }),
    ]);
    expect([await state(older.id), await state(newer.id), await state(back.id)]).toEqual(['ADMITTED', 'PENDING', 'ADMITTED']);
  });
});

describe('quota that can always be reclaimed', () => {
  it('a job that may not be preempted does not borrow: it waits saying why, and the lender keeps its nominal', async () => {
    // The fleet is idle (40 of vision's nominal): nlp, which owns nothing, may borrow only with preemptible work.
    for (const j of (await ok('GET', '/v1/jobs?limit=500')).items as { id: string; state: string }[]) {
      if (j.state !== 'CANCELLED' && j.state !== 'SUCCEEDED' && j.state !== 'FAILED') await ok('DELETE', `/v1/jobs/${j.id}`);
    }
    const pinned = await ok('POST', '/v1/jobs', { ...gang('pinned', 'nlp', 0, 1), preemptible: false });
    const flexible = await ok('POST', '/v1/jobs', gang('flexible', 'nlp', 0, 1));
    await ok('POST', '/v1/scheduler/cycles');
    expect([await state(pinned.id), await state(flexible.id)]).toEqual(['PENDING', 'ADMITTED']);
    const view = await ok('GET', `/v1/jobs/${pinned.id}`);
    expect(view.pending).toMatchObject({ code: 'UNSATISFIABLE' });
    expect(view.pending.message).toContain("a job that may not be preempted runs only within team nlp's nominal quota of 0 (it never borrows)");
    // vision fills its nominal: the borrowed node comes back by reclaim (the flexible job is preemptible).
    const own = await ok('POST', '/v1/jobs', gang('vision-all', 'vision', 0, 5));
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.preemptions).toEqual([expect.objectContaining({ victimJobId: flexible.id, preemptorJobId: own.id, kind: 'ReclaimWithinCohort' })]);
    expect(await state(own.id)).toBe('ADMITTED');
  });
});
