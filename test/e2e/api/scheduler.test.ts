import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

describe('scheduler: POST /v1/scheduler/cycles steps the scheduler; usage follows allocations', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_sched');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('admits a job, shows its allocation and the team usage, then runs it to completion', async () => {
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ replicas: 2, acceleratorsPerReplica: 4 }) });
    expect(job.status).toBe(201);
    const big = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'too-big', replicas: 4, acceleratorsPerReplica: 8, priority: 1 }) });
    expect(big.status).toBe(201);

    const cycle = await h.request('POST', '/v1/scheduler/cycles');
    expect(cycle.status).toBe(200);
    expect(cycle.body.committed).toBe(true);
    expect(cycle.body.admissions.map((a: { jobId: string }) => a.jobId)).toEqual([job.body.id]);
    expect(cycle.body.pending.map((p: { jobId: string }) => p.jobId)).toEqual([big.body.id]);

    const admitted = await h.request('GET', `/v1/jobs/${job.body.id}`);
    expect(admitted.body.state).toBe('ADMITTED');
    expect(admitted.body.flavor).toBe('h100-80gb');
    expect(admitted.body.pending).toBeNull();
    expect(admitted.body.allocation).toHaveLength(2);
    expect(admitted.body.allocation.reduce((s: number, a: { accelerators: number }) => s + a.accelerators, 0)).toBe(8);
    expect(admitted.body.admittedAt).not.toBeNull();
    expect(admitted.body.transitions.map((t: { to: string }) => t.to)).toEqual(['PENDING', 'ADMITTED']);

    const waiting = await h.request('GET', `/v1/jobs/${big.body.id}`);
    expect(waiting.body.state).toBe('PENDING');
    expect(waiting.body.pending.code).toEqual(expect.any(String));
    expect(waiting.body.pending.position).toBe(1);
    expect(waiting.body.pending.message.length).toBeGreaterThan(0);

    const team = await h.request('GET', '/v1/teams/vision');
    const h100 = team.body.quotas.find((q: { flavor: string }) => q.flavor === 'h100-80gb');
    expect(h100).toMatchObject({ nominal: 16, used: 8, borrowed: 0, pendingDemand: 32 });
    const cohort = await h.request('GET', '/v1/cohorts/research');
    expect(cohort.body.members).toEqual(['nlp', 'vision']);
    expect(cohort.body.flavors).toEqual([{ flavor: 'h100-80gb', capacity: 32, used: 8, borrowed: 0, lent: 0, pendingDemand: 32 }]);

    const status = await h.request('GET', '/v1/scheduler');
    expect(status.status).toBe(200);
    expect(status.body.lastCycle).toMatchObject({ admitted: 1, pending: 1 });
    expect(status.body.pendingCount).toBe(1);

    const running = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'RUNNING' } });
    expect(running.status).toBe(200);
    expect(running.body.state).toBe('RUNNING');
    expect(running.body.startedAt).not.toBeNull();
    const done = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'SUCCEEDED', reason: 'exit code 0' } });
    expect(done.body.state).toBe('SUCCEEDED');
    expect(done.body.allocation).toEqual([]);
    expect(done.body.finishedAt).not.toBeNull();
    const after = await h.request('GET', '/v1/teams/vision');
    expect(after.body.quotas.find((q: { flavor: string }) => q.flavor === 'h100-80gb').used).toBe(0);

    const events = await h.request('GET', `/v1/jobs/${job.body.id}/events`);
    expect(events.body.items.map((e: { kind: string }) => e.kind)).toEqual(expect.arrayContaining(['job.running', 'job.succeeded']));
  });

  it('rejects transitions the lifecycle table forbids with 409, changing nothing', async () => {
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'never-admitted' }) });
    const before = await h.counts();
    const r = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'RUNNING' } });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('INVALID_TRANSITION');
    expect(r.body.detail).toContain('PENDING');
    const bad = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'ADMITTED' } });
    expect(bad.status).toBe(400);
    expect(await h.counts()).toEqual(before);
    const failed = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'FAILED', reason: 'image pull error' } });
    expect(failed.status).toBe(200);
    const again = await h.request('POST', `/v1/jobs/${job.body.id}/status`, { body: { state: 'SUCCEEDED' } });
    expect(again.status).toBe(409);
  });
});
