import { afterAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * Relative-speed placement over REST: a job that would finish sooner starting now on the slower a100 than
 * waiting for a busy h100 still waits when its slower run would delay the other waiting jobs by more than it
 * gains (QM_SLOWER_FLAVOR_DELAY_PERCENT, default 300), and its pending reason says so; with the setting at 0
 * only its own finish counts, and it starts on the a100.
 */
const harnesses: Harness[] = [];

afterAll(async () => {
  await Promise.all(harnesses.map((h) => h.close()));
});

/** Both h100 nodes busy for 20 h; `runner` (10 h on an h100, 20 h on the a100) then four a100-only jobs behind it; one cycle. */
async function cycleWithQueue(label: string, env: Record<string, string>): Promise<{ runner: string; cycle: { admissions: { jobId: string; flavor: string }[]; pending: { jobId: string; message: string }[] } }> {
  const h = await startHarness(label, env);
  harnesses.push(h);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await h.request(method, path, body === undefined ? {} : { body });
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await seedTenancy(h);
  await ok('PUT', '/v1/teams/vision/quotas/a100-80gb', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
  await ok('PUT', '/v1/nodes/gpu-a1', { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1', block: 'b3' } });
  for (const name of ['blocker-1', 'blocker-2']) await ok('POST', '/v1/jobs', jobBody({ name, team: 'nlp', replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 20 * 3600 }));
  await ok('POST', '/v1/scheduler/cycles');
  const runner = await ok(
    'POST',
    '/v1/jobs',
    jobBody({ name: 'runner', replicas: 1, acceleratorsPerReplica: 8, flavors: ['h100-80gb', 'a100-80gb'], flavorSelection: 'fastest', speeds: { 'h100-80gb': 2, 'a100-80gb': 1 }, expectedRuntimeSeconds: 10 * 3600 }),
  );
  for (let i = 0; i < 4; i++) await ok('POST', '/v1/jobs', jobBody({ name: `after-${i}`, replicas: 1, acceleratorsPerReplica: 8, flavors: ['a100-80gb'], expectedRuntimeSeconds: 3600 }));
  return { runner: runner.id, cycle: await ok('POST', '/v1/scheduler/cycles') };
}

describe('a slower flavor and the jobs waiting behind', () => {
  it('the job waits for the h100 when its 20 h a100 run would delay the four others more than the 10 h it gains, and says so', async () => {
    // Finishing at 20 h on the a100 beats 30 h waiting; but it holds 80 more accelerator-hours on the 8 a100s:
    // ~10 h for each of the 4 others that wait for them, × 3 (the default weight) = 120 h in all > 10 h.
    const { runner, cycle } = await cycleWithQueue('api_slower_flavor', {});
    expect(cycle.admissions.map((a) => a.jobId)).not.toContain(runner);
    const reason = cycle.pending.find((p) => p.jobId === runner)!.message;
    expect(reason).toContain('on a100-80gb: fits now and would finish at');
    expect(reason).toContain('but its slower run would hold 80 more accelerator-hours, ~120 h of delay for the 4 other waiting jobs in all; waits for h100-80gb');
  });

  it('QM_SLOWER_FLAVOR_DELAY_PERCENT=0: only its own finish counts, and it starts on the a100', async () => {
    const { runner, cycle } = await cycleWithQueue('api_slower_flavor_0', { QM_SLOWER_FLAVOR_DELAY_PERCENT: '0' });
    expect(cycle.admissions).toEqual(expect.arrayContaining([expect.objectContaining({ jobId: runner, flavor: 'a100-80gb' })]));
  });
});
