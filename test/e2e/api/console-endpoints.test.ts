import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/** The read-only endpoints the web console adds (docs/api-quickstart.md#changelog). */
describe('console endpoints: queue order, overview, cycle history, fleet, placement, audit', () => {
  let h: Harness;
  let alice: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    h = await startHarness('api_console');
    await seedTenancy(h);
    // A cordoned node: its free accelerators count as unschedulable, not free.
    const node = await h.request('PUT', '/v1/nodes/gpu-3', {
      body: {
        flavor: 'h100-80gb',
        accelerators: 8,
        cpuMillis: 96000,
        memoryMiB: 1048576,
        topology: { zone: 'z2', block: 'b9' },
        schedulable: false,
      },
    });
    expect(node.status).toBe(201);
    alice = await memberToken(h, 'alice', ['vision']);
    for (const [name, team, replicas, priority] of [
      ['fits', 'vision', 1, 50],
      ['big-low', 'vision', 4, 1],
      ['big-high', 'nlp', 4, 500],
    ] as const) {
      const r = await h.request('POST', '/v1/jobs', {
        body: jobBody({
          name,
          team,
          replicas,
          acceleratorsPerReplica: 8,
          priority,
          expectedRuntimeSeconds: 3600,
        }),
      });
      expect(r.status).toBe(201);
      ids[name] = r.body.id;
    }
    const cycle = await h.request('POST', '/v1/scheduler/cycles');
    expect(cycle.status).toBe(200);
  });
  afterAll(async () => {
    await h.close();
  });

  it('GET /v1/queue lists pending jobs in the scheduler order of the last cycle, with reason and position', async () => {
    const r = await h.request('GET', '/v1/queue');
    expect(r.status).toBe(200);
    const positions = r.body.items.map((j: { name: string; pending: { position: number } }) => [
      j.name,
      j.pending.position,
    ]);
    // Higher priority first, whatever the submission order.
    expect(positions).toEqual([
      ['big-high', 1],
      ['big-low', 2],
    ]);
    expect(r.body.total).toBe(2);
    expect(r.body.items[0].pending.code).toEqual(expect.any(String));
    expect(r.body.items[0].pending.message.length).toBeGreaterThan(0);

    const holding = await h.request('GET', '/v1/queue?state=ADMITTED,BINDING,RUNNING');
    expect(holding.body.items.map((j: { name: string; flavor: string }) => [j.name, j.flavor])).toEqual([
      ['fits', 'h100-80gb'],
    ]);
    const page = await h.request('GET', '/v1/queue?limit=1&offset=1');
    expect(page.body.items.map((j: { name: string }) => j.name)).toEqual(['big-low']);
    expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect((await h.request('GET', '/v1/queue?flavor=a100-80gb')).body.total).toBe(0);
    expect(
      (await h.request('GET', '/v1/queue?team=nlp')).body.items.map((j: { name: string }) => j.name),
    ).toEqual(['big-high']);
  });

  it('GET /v1/queue: members see their teams only; bad filters are 400 naming the field', async () => {
    const mine = await h.request('GET', '/v1/queue', { token: alice });
    expect(mine.body.items.map((j: { team: string }) => j.team)).toEqual(['vision']);
    expect(mine.body.total).toBe(1);
    expect((await h.request('GET', '/v1/queue?team=nlp', { token: alice })).status).toBe(403);
    for (const [query, field] of [
      ['state=PENDING,RUNNING', 'state'],
      ['state=DONE', 'state'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['flavor=Not_A_Name', 'flavor'],
      ['sort=name', 'sort'],
    ]) {
      const r = await h.request('GET', `/v1/queue?${query}`);
      expect({
        query,
        status: r.status,
        fields: r.body.errors.map((e: { field: string }) => e.field),
      }).toEqual({ query, status: 400, fields: [field] });
    }
    expect((await h.request('GET', '/v1/queue', { token: null })).status).toBe(401);
  });

  it('GET /v1/overview: capacity per flavor adds up; the queue by reason is scoped to the caller', async () => {
    const r = await h.request('GET', '/v1/overview');
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('all teams');
    expect(r.body.flavors).toEqual([
      {
        flavor: 'a100-80gb',
        kind: 'nvidia-gpu',
        nodes: 0,
        total: 0,
        allocated: 0,
        free: 0,
        unschedulable: 0,
      },
      {
        flavor: 'h100-80gb',
        kind: 'nvidia-gpu',
        nodes: 3,
        total: 24,
        allocated: 8,
        free: 8,
        unschedulable: 8,
      },
    ]);
    expect(r.body.jobs).toEqual({ PENDING: 2, ADMITTED: 1, BINDING: 0, RUNNING: 0 });
    expect(r.body.pendingByReason.reduce((s: number, x: { jobs: number }) => s + x.jobs, 0)).toBe(2);
    expect(
      r.body.pendingByReason.reduce((s: number, x: { accelerators: number }) => s + x.accelerators, 0),
    ).toBe(64);

    const member = await h.request('GET', '/v1/overview', { token: alice });
    expect(member.body.scope).toEqual(['vision']);
    expect(member.body.jobs).toEqual({ PENDING: 1, ADMITTED: 1, BINDING: 0, RUNNING: 0 });
    expect(member.body.pendingByReason).toEqual([{ code: expect.any(String), jobs: 1, accelerators: 32 }]);
    expect(member.body.flavors).toEqual(r.body.flavors);
  });

  it('GET /v1/overview/history: every bucket present, admissions summed from committed cycles', async () => {
    const r = await h.request('GET', '/v1/overview/history?hours=2&stepMinutes=30');
    expect(r.status).toBe(200);
    expect(r.body.stepMinutes).toBe(30);
    // 2 h in 30-minute buckets, aligned to the half hour: 4 or 5 buckets.
    expect(r.body.buckets.length).toBeGreaterThanOrEqual(4);
    expect(r.body.buckets.length).toBeLessThanOrEqual(5);
    const buckets = r.body.buckets as Record<string, number>[];
    const sum = (k: string): number => buckets.reduce((s, b) => s + b[k]!, 0);
    expect(sum('cycles')).toBe(1);
    expect(sum('admitted')).toBe(1);
    expect(sum('preempted')).toBe(0);
    expect(r.body.buckets.at(-1).admitted).toBe(1);
    const bad = await h.request('GET', '/v1/overview/history?hours=168&stepMinutes=1');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('stepMinutes');
    expect((await h.request('GET', '/v1/overview/history?hours=0')).body.errors[0].field).toBe('hours');
  });

  it('GET /v1/fleet/nodes: allocation per node with topology; cordoned nodes marked', async () => {
    const r = await h.request('GET', '/v1/fleet/nodes', { token: alice });
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.items.map((n: { name: string }) => [n.name, n]));
    expect(Object.keys(byName)).toEqual(['gpu-1', 'gpu-2', 'gpu-3']);
    const used = r.body.items.filter((n: { allocated: number }) => n.allocated > 0);
    expect(used).toHaveLength(1);
    expect(used[0]).toMatchObject({ allocated: 8, free: 0, jobs: 1, schedulable: true });
    expect(byName['gpu-3']).toMatchObject({
      schedulable: false,
      allocated: 0,
      free: 8,
      topology: { zone: 'z2', block: 'b9' },
    });
  });

  it('GET /v1/jobs/{id}/placement: node and topology per replica; other teams 403; unknown 404', async () => {
    const r = await h.request('GET', `/v1/jobs/${ids.fits}/placement`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.flavor).toBe('h100-80gb');
    expect(r.body.items).toEqual([
      {
        replica: 0,
        node: expect.stringMatching(/^gpu-[12]$/),
        accelerators: 8,
        zone: 'z1',
        block: expect.stringMatching(/^b[12]$/),
        domain: null,
        tpuShape: null,
      },
    ]);
    expect((await h.request('GET', `/v1/jobs/${ids['big-low']}/placement`)).body.items).toEqual([]);
    expect((await h.request('GET', `/v1/jobs/${ids['big-high']}/placement`, { token: alice })).status).toBe(
      403,
    );
    expect((await h.request('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000/placement')).status).toBe(
      404,
    );
    expect((await h.request('GET', '/v1/jobs/not-a-uuid/placement')).status).toBe(404);
  });

  it('GET /v1/audit: quota and budget changes newest first (numerically, past id 9), scoped to the caller, paged with before', async () => {
    for (const nominal of [17, 18, 19, 20, 21, 22, 23, 24]) {
      expect(
        (
          await h.request('PUT', '/v1/teams/vision/quotas/h100-80gb', {
            body: { nominal, borrowingLimit: 8, lendingLimit: null },
          })
        ).status,
      ).toBe(200);
    }
    const r = await h.request('GET', '/v1/audit?limit=3');
    expect(r.status).toBe(200);
    expect(r.body.items.map((e: { data: { after: { nominal: number } } }) => e.data.after.nominal)).toEqual([
      24, 23, 22,
    ]);
    expect(r.body.items[0]).toMatchObject({
      kind: 'quota.updated',
      team: 'vision',
      actor: 'admin',
      data: { flavor: 'h100-80gb', before: { nominal: 23 } },
    });
    const next = await h.request('GET', `/v1/audit?limit=3&before=${r.body.nextBefore}`);
    expect(
      next.body.items.map((e: { data: { after: { nominal: number } } }) => e.data.after.nominal),
    ).toEqual([21, 20, 19]);

    const all = await h.request('GET', '/v1/audit?limit=200');
    expect(all.body.items.map((e: { team: string }) => e.team)).toContain('nlp');
    expect(all.body.nextBefore).toBeNull();
    const member = await h.request('GET', '/v1/audit?limit=200', { token: alice });
    expect(new Set(member.body.items.map((e: { team: string }) => e.team))).toEqual(new Set(['vision']));
    expect((await h.request('GET', '/v1/audit?team=nlp', { token: alice })).status).toBe(403);
    expect((await h.request('GET', '/v1/audit?before=abc')).body.errors[0].field).toBe('before');
    expect((await h.request('GET', '/v1/audit?limit=201')).status).toBe(400);

    // Budget changes are in the same trail.
    const budget = await h.request('PUT', '/v1/teams/vision/budgets/month', {
      body: { limit: 500, unit: 'accelerator-hours', onExhausted: 'warn' },
    });
    expect(budget.status).toBe(201);
    const latest = await h.request('GET', '/v1/audit?limit=1', { token: alice });
    expect(latest.body.items[0]).toMatchObject({
      kind: 'budget.created',
      team: 'vision',
      actor: 'admin',
      data: { period: 'month', before: null, after: { limit: 500 } },
    });
  });
});
