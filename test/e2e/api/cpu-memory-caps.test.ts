import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * CPU and memory under quota (issue #26, failure 4): a job without accelerators lands on GPU nodes (the fleet has
 * no others) and is charged to its team's CPU and memory caps on that flavor, so it cannot take the CPU another
 * team's in-quota GPU job needs. Caps are set with the quota (PUT /v1/teams/{team}/quotas/{flavor}), shown with
 * its live usage (GET /v1/teams/{team}), and bad values are a 400 naming the field that changes nothing.
 */
describe('CPU and memory caps per team and flavor', () => {
  let h: Harness;
  const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);
  const cpuOnly = (name: string, replicas: number, minReplicas: number) =>
    jobBody({
      name,
      team: 'etl',
      replicas,
      minReplicas,
      acceleratorsPerReplica: 0,
      template: { image: 'ghcr.io/acme/etl:1', command: ['spark-submit', 'prep.py'], cpuMillis: 40_000, memoryMiB: 65_536 },
    });

  beforeAll(async () => {
    h = await startHarness('api_cpu_caps');
    await seedTenancy(h);
    // etl runs CPU-only preprocessing on the GPU nodes (two of 8 GPUs and 96 cores): no accelerators, 100 cores.
    await ok('PUT', '/v1/teams/etl', {});
    await ok('PUT', '/v1/teams/etl/quotas/h100-80gb', { nominal: 0, cpuMillisLimit: 100_000, memoryMiBLimit: 1_048_576 });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('charges a job without accelerators to its team’s CPU cap, so another team’s in-quota GPU job still fits', async () => {
    // Asks up to 4 replicas of 40 cores (160 of the fleet's 192); its cap allows 2.
    const prep = await ok('POST', '/v1/jobs', cpuOnly('prep', 4, 1));
    await ok('POST', '/v1/scheduler/cycles');
    const admitted = await ok('GET', `/v1/jobs/${prep.id}`);
    if (admitted.state !== 'ADMITTED') throw new Error(`prep is ${admitted.state}: ${JSON.stringify(admitted.pending)}`);
    expect((admitted.allocation as { accelerators: number }[]).map((a) => a.accelerators)).toEqual([0, 0]);

    const etl = await ok('GET', '/v1/teams/etl');
    expect(etl.quotas).toEqual([
      expect.objectContaining({ flavor: 'h100-80gb', used: 0, cpuMillisLimit: 100_000, cpuMillisUsed: 80_000, memoryMiBLimit: 1_048_576, memoryMiBUsed: 131_072 }),
    ]);

    // vision's 8-GPU job asks 48 cores: it fits on the node prep left alone.
    const train = await ok('POST', '/v1/jobs', jobBody({ name: 'train', team: 'vision', replicas: 1, acceleratorsPerReplica: 8, template: { image: 'ghcr.io/acme/llama:1', command: ['train'], cpuMillis: 48_000, memoryMiB: 65_536 } }));
    // A second CPU-only etl job waits for its own team's cap, and says so.
    const more = await ok('POST', '/v1/jobs', cpuOnly('prep-2', 1, 1));
    await ok('POST', '/v1/scheduler/cycles');
    expect((await ok('GET', `/v1/jobs/${train.id}`)).state).toBe('ADMITTED');
    const waiting = await ok('GET', `/v1/jobs/${more.id}`);
    expect(waiting.state).toBe('PENDING');
    expect(waiting.pending.code).toBe('QUOTA_EXCEEDED');
    expect(waiting.pending.message).toContain("team etl's jobs hold 80000m CPU of its 100000m CPU limit on h100-80gb nodes; needs 40000m CPU more");

    for (const id of [prep.id, train.id, more.id]) await ok('DELETE', `/v1/jobs/${id}`);
  });

  it('says a job that asks more than the cap allows at all never fits', async () => {
    const big = await ok('POST', '/v1/jobs', cpuOnly('too-big', 3, 3));
    await ok('POST', '/v1/scheduler/cycles');
    const detail = await ok('GET', `/v1/jobs/${big.id}`);
    expect(detail.pending).toMatchObject({ code: 'UNSATISFIABLE' });
    expect(detail.pending.message).toBe("needs 120000m CPU on h100-80gb nodes but team etl's CPU limit there is 100000m CPU");
    await ok('DELETE', `/v1/jobs/${big.id}`);
  });

  it('keeps the caps with the quota: PUT sets and clears them, each change audited', async () => {
    const set = await ok('PUT', '/v1/teams/nlp/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: 8, cpuMillisLimit: 64_000 });
    expect(set).toMatchObject({ cpuMillisLimit: 64_000, memoryMiBLimit: null, before: { cpuMillisLimit: null } });
    const cleared = await ok('PUT', '/v1/teams/nlp/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: 8, cpuMillisLimit: null });
    expect(cleared).toMatchObject({ cpuMillisLimit: null, before: { cpuMillisLimit: 64_000 } });
    const audit = await h.pg.query<{ message: string }>(`SELECT message FROM events WHERE id = $1`, [cleared.eventId]);
    expect(audit.rows[0]!.message).toContain('CPU 64000, memory unlimited → nominal 16, borrowing unlimited, lending 8, CPU unlimited, memory unlimited');
  });

  it.each([
    { body: { nominal: 8, cpuMillisLimit: -1 }, field: 'cpuMillisLimit' },
    { body: { nominal: 8, cpuMillisLimit: 'lots' }, field: 'cpuMillisLimit' },
    { body: { nominal: 8, memoryMiBLimit: 1.5 }, field: 'memoryMiBLimit' },
    { body: { nominal: 8, memoryMiBLimit: 2 ** 40 }, field: 'memoryMiBLimit' },
  ])('refuses $body with a 400 naming $field, changing nothing', async ({ body, field }) => {
    const before = await ok('GET', '/v1/teams/etl');
    const r = await h.request('PUT', '/v1/teams/etl/quotas/h100-80gb', { body });
    expect(r.status).toBe(400);
    expect(r.contentType).toContain('application/problem+json');
    expect(JSON.stringify(r.body)).toContain(field);
    expect((await ok('GET', '/v1/teams/etl')).quotas).toEqual(before.quotas);
  });
});
