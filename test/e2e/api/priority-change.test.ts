import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/** A pending job's priority changes after submission, through the priority classes and the team's ceiling. */
describe('POST /v1/jobs/{id}/priority', () => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let n = 0;
  // 2 × 8 GPUs: the two h100 nodes hold one such job at a time.
  const submit = async (priorityClass: string, token: string = alice): Promise<string> =>
    (await h.ok('POST', '/v1/jobs', jobBody({ name: `prio-${++n}`, acceleratorsPerReplica: 8, priorityClass }), token)).id as string;
  const change = (id: string, body: unknown, token?: string) => h.request('POST', `/v1/jobs/${id}/priority`, { body, ...(token ? { token } : {}) });
  const events = async (id: string) =>
    (await h.pg.query<{ actor: string; message: string; data: unknown }>(`SELECT actor, message, data FROM events WHERE job_id = $1 AND kind = 'job.priority-changed' ORDER BY id`, [id])).rows;

  beforeAll(async () => {
    h = await startHarness('api_priority_change');
    await seedTenancy(h);
    await h.ok('PUT', '/v1/priority-classes/standard', { value: 0, default: true });
    await h.ok('PUT', '/v1/priority-classes/high', { value: 1000 });
    await h.ok('PUT', '/v1/priority-classes/batch', { value: -100 });
    alice = await memberToken(h, 'alice', ['vision']);
    bob = await memberToken(h, 'bob', ['nlp']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('a member raises a pending job within the ceiling; the next cycle admits it before an older job it now outranks; the change is an event', async () => {
    const older = await submit('batch');
    const raised = await submit('batch');
    const r = await change(raised, { priorityClass: 'standard' }, alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: raised, state: 'PENDING', priority: 0, priorityClass: 'standard' });
    expect(await events(raised)).toEqual([
      {
        actor: 'alice',
        message: 'priority batch (-100) → standard (0)',
        data: { before: { priority: -100, priorityClass: 'batch' }, after: { priority: 0, priorityClass: 'standard' } },
      },
    ]);
    // The same priority again: 200, nothing written.
    expect((await change(raised, { priorityClass: 'standard' }, alice)).status).toBe(200);
    expect(await events(raised)).toHaveLength(1);

    await h.ok('POST', '/v1/scheduler/cycles');
    expect((await h.ok('GET', `/v1/jobs/${raised}`)).state).toBe('ADMITTED');
    expect((await h.ok('GET', `/v1/jobs/${older}`)).state).toBe('PENDING');
    // Admitted: its priority no longer changes (409), and nothing is written.
    const late = await change(raised, { priorityClass: 'batch' }, alice);
    expect(late.status).toBe(409);
    expect(late.body.detail).toContain('only a PENDING job');
    expect((await h.ok('GET', `/v1/jobs/${raised}`)).priorityClass).toBe('standard');
    await h.ok('DELETE', `/v1/jobs/${raised}`);
    await h.ok('DELETE', `/v1/jobs/${older}`);
  });

  it('refuses what a submission would refuse, naming the field, and changes nothing', async () => {
    const id = await submit('batch');
    const above = await change(id, { priorityClass: 'high' }, alice);
    expect(above.status).toBe(403);
    expect(above.body.detail).toContain('choose standard, batch');
    const unknown = await change(id, { priorityClass: 'urgent' }, alice);
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ field: 'priorityClass', message: expect.stringContaining('unknown priority class: urgent') }]);
    const number = await change(id, { priority: 5 }, alice);
    expect(number.status).toBe(400);
    expect(number.body.errors).toEqual([{ field: 'priority', message: expect.stringContaining('priorityClass') }]);
    const empty = await change(id, {}, alice);
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([{ field: 'priorityClass', message: expect.stringContaining('give the priorityClass') }]);
    const bad = await change(id, { priorityClass: 7 }, alice);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('priorityClass');
    // Another team's member: the job does not exist for it.
    expect((await change(id, { priorityClass: 'standard' }, bob)).status).toBe(404);
    expect((await change('00000000-0000-4000-8000-000000000000', { priorityClass: 'standard' })).status).toBe(404);
    expect(await events(id)).toEqual([]);
    expect((await h.ok('GET', `/v1/jobs/${id}`))).toMatchObject({ priority: -100, priorityClass: 'batch' });

    // An admin may choose any class, or a number.
    expect((await change(id, { priorityClass: 'high' })).body).toMatchObject({ priority: 1000, priorityClass: 'high' });
    expect((await change(id, { priority: 250 })).body).toMatchObject({ priority: 250, priorityClass: null });
    expect((await events(id)).map((e) => e.message)).toEqual(['priority batch (-100) → high (1000)', 'priority high (1000) → 250']);
    await h.ok('DELETE', `/v1/jobs/${id}`);
  });
});
