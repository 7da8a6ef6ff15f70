import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * Moves to faster accelerators over REST: a job that checkpoints starts on the slower a100 because the
 * h100s are busy for long; when an h100 node frees, the next cycle moves it there (evicted and admitted
 * again in one commit), its events say so, and it never moves back down.
 */
let h: Harness;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

beforeAll(async () => {
  h = await startHarness('api_moves');
  await seedTenancy(h);
  await ok('PUT', '/v1/teams/vision/quotas/a100-80gb', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
  await ok('PUT', '/v1/nodes/gpu-a1', { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1', block: 'b3' } });
});
afterAll(async () => {
  await h.close();
});

describe('moves to a faster flavor', () => {
  it('a checkpointing job on the slow flavor moves to the fast one that freed up, in one cycle, and its events say why', async () => {
    // Both h100 nodes busy for 1,000 h.
    const blockers = [];
    for (const name of ['blocker-1', 'blocker-2']) {
      blockers.push(await ok('POST', '/v1/jobs', jobBody({ name, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 1000 * 3600 })));
    }
    await ok('POST', '/v1/scheduler/cycles');
    // 100 h on an h100, 200 h on an a100 (its speeds 2 vs 1): starting on the a100 now beats waiting 1,000 h.
    const mover = await ok(
      'POST',
      '/v1/jobs',
      jobBody({
        name: 'mover',
        replicas: 1,
        acceleratorsPerReplica: 8,
        flavors: ['h100-80gb', 'a100-80gb'],
        flavorSelection: 'fastest',
        speeds: { 'h100-80gb': 2, 'a100-80gb': 1 },
        expectedRuntimeSeconds: 100 * 3600,
        checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 30 },
      }),
    );
    const first = await ok('POST', '/v1/scheduler/cycles');
    expect(first.admissions).toEqual([expect.objectContaining({ jobId: mover.id, flavor: 'a100-80gb' })]);
    expect(first.moves).toEqual([]);
    await ok('POST', `/v1/jobs/${mover.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${mover.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.01 });

    // An h100 node frees: the cycle moves the mover there.
    await ok('POST', `/v1/jobs/${blockers[0].id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${blockers[0].id}/status`, { state: 'SUCCEEDED' });
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.moves).toEqual([
      expect.objectContaining({
        jobId: mover.id,
        from: 'a100-80gb',
        to: 'h100-80gb',
        gracePeriodSeconds: 30,
        placement: [expect.objectContaining({ node: 'gpu-1', accelerators: 8 })],
        message: expect.stringMatching(/^moved from a100-80gb to h100-80gb: expected to finish (99|100) h earlier$/),
      }),
    ]);
    const job = await ok('GET', `/v1/jobs/${mover.id}`);
    expect([job.state, job.flavor]).toEqual(['ADMITTED', 'h100-80gb']);
    const events = (await ok('GET', `/v1/jobs/${mover.id}/events`)).items as { kind: string; message: string; data: Record<string, unknown> }[];
    const moved = events.find((e) => e.kind === 'job.moved');
    expect(moved).toEqual(expect.objectContaining({ message: cycle.moves[0].message, data: expect.objectContaining({ from: 'a100-80gb', to: 'h100-80gb' }) }));
    const admitted = events.filter((e) => e.kind === 'job.admitted').map((e) => e.message);
    expect(admitted).toHaveLength(2);
    expect(admitted).toEqual(expect.arrayContaining([expect.stringMatching(/8 a100-80gb on 1 node\(s\)$/), expect.stringMatching(/8 h100-80gb on 1 node\(s\) \(moved from a100-80gb\)$/)]));
    const usage = await h.pg.query<{ n: string }>(`SELECT count(*)::text AS n FROM allocations WHERE job_id = $1 AND flavor = 'h100-80gb'`, [mover.id]);
    expect(usage.rows[0]!.n).toBe('1');

    // The a100 is free now, and slower: no move back.
    await ok('POST', `/v1/jobs/${mover.id}/status`, { state: 'RUNNING' });
    expect((await ok('POST', '/v1/scheduler/cycles')).moves).toEqual([]);
    expect((await ok('GET', `/v1/jobs/${mover.id}`)).flavor).toBe('h100-80gb');
    await ok('DELETE', `/v1/jobs/${mover.id}`);
  });

  it('moves a multi-role gang with each replica in its own role’s shape, and its allocations say which role', async () => {
    // gpu-2 is still busy; a new blocker takes gpu-1, so the gang starts on the a100 node.
    const blocker = await ok('POST', '/v1/jobs', jobBody({ name: 'blocker-3', replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 1000 * 3600 }));
    await ok('POST', '/v1/scheduler/cycles');
    const { replicas: _r, acceleratorsPerReplica: _a, ...rest } = jobBody();
    const gang = await ok('POST', '/v1/jobs', {
      ...rest,
      name: 'rl-gang',
      roles: [
        { name: 'learner', replicas: 1, acceleratorsPerReplica: 4, cpuMillis: 16000, memoryMiB: 131072 },
        { name: 'actors', replicas: 2, acceleratorsPerReplica: 2, cpuMillis: 4000, memoryMiB: 32768 },
      ],
      flavors: ['h100-80gb', 'a100-80gb'],
      flavorSelection: 'fastest',
      speeds: { 'h100-80gb': 2, 'a100-80gb': 1 },
      expectedRuntimeSeconds: 100 * 3600,
      checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 30 },
    });
    const first = await ok('POST', '/v1/scheduler/cycles');
    expect(first.admissions).toEqual([expect.objectContaining({ jobId: gang.id, flavor: 'a100-80gb' })]);
    await ok('POST', `/v1/jobs/${gang.id}/status`, { state: 'RUNNING' });

    await ok('POST', `/v1/jobs/${blocker.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${blocker.id}/status`, { state: 'SUCCEEDED' });
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.moves).toEqual([expect.objectContaining({ jobId: gang.id, from: 'a100-80gb', to: 'h100-80gb' })]);
    const rows = await h.pg.query<{ role: string; accelerators: number; cpu_millis: number; flavor: string }>(
      'SELECT role, accelerators, cpu_millis, flavor FROM allocations WHERE job_id = $1 ORDER BY replica',
      [gang.id],
    );
    expect(rows.rows).toEqual([
      { role: 'learner', accelerators: 4, cpu_millis: 16000, flavor: 'h100-80gb' },
      { role: 'actors', accelerators: 2, cpu_millis: 4000, flavor: 'h100-80gb' },
      { role: 'actors', accelerators: 2, cpu_millis: 4000, flavor: 'h100-80gb' },
    ]);
    expect((await ok('GET', `/v1/jobs/${gang.id}`)).flavor).toBe('h100-80gb');
  });
});
