import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * Multi-role gangs over REST: a job of roles (a CPU-only driver and 8-GPU workers) is charged for the
 * accelerators its roles ask, not for every pod at its largest role's shape; bad roles are a 400 naming
 * `roles[i].field` and create nothing.
 */
describe('multi-role jobs', () => {
  let h: Harness;
  const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);
  const roles = (...list: Record<string, unknown>[]) => {
    const { replicas: _r, acceleratorsPerReplica: _a, ...rest } = jobBody();
    return { ...rest, roles: list };
  };
  const driver = { name: 'driver', replicas: 1, acceleratorsPerReplica: 0, cpuMillis: 4000, memoryMiB: 16384 };
  const workers = { name: 'worker', replicas: 2, acceleratorsPerReplica: 8, cpuMillis: 16000, memoryMiB: 131072 };

  beforeAll(async () => {
    h = await startHarness('api_roles');
    await seedTenancy(h);
    // A team of its own with exactly the 16 h100s its two workers need (no cohort: nothing to borrow).
    await ok('PUT', '/v1/teams/solo', {});
    await ok('PUT', '/v1/teams/solo/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: null });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('admits a CPU-only driver and two 8-GPU workers on 16 accelerators of quota, charging 16', async () => {
    const job = await ok('POST', '/v1/jobs', { ...roles(driver, workers), name: 'spark-ft', team: 'solo' });
    expect(job.roles).toEqual([
      { name: 'driver', replicas: 1, minReplicas: 1, acceleratorsPerReplica: 0, cpuMillisPerReplica: 4000, memoryMiBPerReplica: 16384 },
      { name: 'worker', replicas: 2, minReplicas: 2, acceleratorsPerReplica: 8, cpuMillisPerReplica: 16000, memoryMiBPerReplica: 131072 },
    ]);
    // The envelope: every replica of the gang, the largest shape.
    expect(job).toMatchObject({ replicas: 3, minReplicas: 3, acceleratorsPerReplica: 8 });

    await ok('POST', '/v1/scheduler/cycles');
    const detail = await ok('GET', `/v1/jobs/${job.id}`);
    if (detail.state !== 'ADMITTED') throw new Error(`spark-ft is ${detail.state}: ${JSON.stringify(detail.pending)}`);
    const allocation = detail.allocation as { replica: number; role: string; node: string; accelerators: number; cpuMillis: number; memoryMiB: number }[];
    expect(allocation.map((a) => [a.replica, a.role, a.accelerators])).toEqual([
      [0, 'driver', 0],
      [1, 'worker', 8],
      [2, 'worker', 8],
    ]);
    expect(allocation[0]).toMatchObject({ cpuMillis: 4000, memoryMiB: 16384 });
    expect(new Set(allocation.slice(1).map((a) => a.node))).toEqual(new Set(['gpu-1', 'gpu-2']));

    // The team's 16 are used: one more accelerator is over quota.
    const more = await ok('POST', '/v1/jobs', jobBody({ name: 'one-more', team: 'solo', replicas: 1, acceleratorsPerReplica: 1 }));
    await ok('POST', '/v1/scheduler/cycles');
    const waiting = await ok('GET', `/v1/jobs/${more.id}`);
    expect(waiting.state).toBe('PENDING');
    expect(waiting.pending.code).toBe('QUOTA_EXCEEDED');
    expect(waiting.pending.message).toContain('16');
    await ok('DELETE', `/v1/jobs/${more.id}`);
    await ok('DELETE', `/v1/jobs/${job.id}`);
  });

  it('says which resource a role lacks', async () => {
    const job = await ok('POST', '/v1/jobs', { ...roles({ ...driver, memoryMiB: 4_000_000 }, workers), name: 'fat-driver', team: 'solo' });
    await ok('POST', '/v1/scheduler/cycles');
    const detail = await ok('GET', `/v1/jobs/${job.id}`);
    expect(detail.state).toBe('PENDING');
    expect(detail.pending.code).toBe('INSUFFICIENT_CAPACITY');
    expect(detail.pending.message).toContain('role driver');
    expect(detail.pending.message).toContain('short of memory');
    await ok('DELETE', `/v1/jobs/${job.id}`);
  });

  it.each([
    { what: 'duplicate names', list: [driver, { ...workers, name: 'driver' }], field: 'roles[1].name' },
    { what: 'a count of 0', list: [driver, { ...workers, replicas: 0 }], field: 'roles[1].replicas' },
    { what: 'a minimum above the count', list: [{ ...workers, minReplicas: 3 }], field: 'roles[0].minReplicas' },
    { what: 'a negative accelerator count', list: [{ ...driver, acceleratorsPerReplica: -1 }], field: 'roles[0].acceleratorsPerReplica' },
    { what: 'no role at all', list: [], field: 'roles' },
  ])('refuses roles with $what (400 naming $field), creating nothing', async ({ list, field }) => {
    const before = (await ok('GET', '/v1/jobs?team=solo&limit=500')).items.length;
    const r = await h.request('POST', '/v1/jobs', { body: { ...roles(...(list as Record<string, unknown>[])), name: 'bad-roles', team: 'solo' } });
    expect(r.status).toBe(400);
    expect((r.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    expect((await ok('GET', '/v1/jobs?team=solo&limit=500')).items.length).toBe(before);
  });

  it('refuses roles together with replicas or acceleratorsPerReplica', async () => {
    const r = await h.request('POST', '/v1/jobs', { body: { ...jobBody({ team: 'solo' }), roles: [driver, workers] } });
    expect(r.status).toBe(400);
    expect((r.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['acceleratorsPerReplica', 'replicas']);
  });

  it('still requires replicas and acceleratorsPerReplica of a job without roles', async () => {
    const { replicas: _r, acceleratorsPerReplica: _a, ...rest } = jobBody({ team: 'solo' });
    const r = await h.request('POST', '/v1/jobs', { body: rest });
    expect(r.status).toBe(400);
    expect((r.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['acceleratorsPerReplica', 'replicas']);
  });
});
