import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * Members choose a priority class, never a number: before classes, any member could submit priority
 * 1,000,000 and, under the team's LowerPriority rule, preempt every teammate.
 */
describe('priority classes owned by infra leads', () => {
  let h: Harness;
  let alice: string;
  let submitted = 0;
  const submit = (body: Record<string, unknown>, token?: string, key?: string) =>
    h.request('POST', '/v1/jobs', { body: jobBody({ name: `job-${++submitted}`, ...body }), ...(token ? { token } : {}), ...(key ? { headers: { 'idempotency-key': key } } : {}) });
  const jobsWritten = async (): Promise<number> => Number((await h.pg.query('SELECT count(*) AS n FROM jobs')).rows[0].n);

  beforeAll(async () => {
    h = await startHarness('api_priority_classes');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it("a member's numeric priority is refused (400 naming the field) and writes nothing; an admin's is kept", async () => {
    const before = await jobsWritten();
    const r = await submit({ priority: 1_000_000 }, alice);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_FAILED');
    expect(r.body.errors).toEqual([{ field: 'priority', message: expect.stringContaining('priorityClass') }]);
    expect(await jobsWritten()).toBe(before);
    const admin = await submit({ priority: 500 });
    expect(admin.status).toBe(201);
    expect(admin.body).toMatchObject({ priority: 500, priorityClass: null });
  });

  it('without classes a member job gets priority 0; an unknown class is a 422 naming priorityClass', async () => {
    const r = await submit({}, alice);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ priority: 0, priorityClass: null });
    const unknown = await submit({ priorityClass: 'urgent' }, alice);
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ field: 'priorityClass', message: expect.stringContaining('unknown priority class: urgent') }]);
  });

  it('a null priority or priorityClass is the same as leaving it out (admin and member), never a 500', async () => {
    for (const token of [undefined, alice]) {
      const r = await submit({ priority: null }, token);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ priority: 0, priorityClass: null });
      const c = await submit({ priorityClass: null }, token);
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ priority: 0, priorityClass: null });
      expect((await submit({ priority: null, priorityClass: null }, token)).status).toBe(201);
    }
  });

  it('infra leads define classes with one default; members get the default and may not go above it unless the team allows', async () => {
    expect((await h.request('PUT', '/v1/priority-classes/standard', { body: { value: 0, default: true, description: 'most jobs' } })).status).toBe(201);
    expect((await h.request('PUT', '/v1/priority-classes/high', { body: { value: 1000 } })).status).toBe(201);
    expect((await h.request('PUT', '/v1/priority-classes/batch', { body: { value: -100 } })).status).toBe(201);
    expect((await h.request('PUT', '/v1/priority-classes/high', { body: { value: 1000 }, token: alice })).status).toBe(403);
    const list = await h.request('GET', '/v1/priority-classes', { token: alice });
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: { name: string; value: number; default: boolean }) => [c.name, c.value, c.default])).toEqual([
      ['high', 1000, false],
      ['standard', 0, true],
      ['batch', -100, false],
    ]);

    const plain = await submit({}, alice);
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ priority: 0, priorityClass: 'standard' });
    const low = await submit({ priorityClass: 'batch' }, alice);
    expect(low.body).toMatchObject({ priority: -100, priorityClass: 'batch' });

    const before = await jobsWritten();
    const above = await submit({ priorityClass: 'high' }, alice);
    expect(above.status).toBe(403);
    expect(above.body.detail).toContain('choose standard, batch');
    expect(await jobsWritten()).toBe(before);
    // An admin may choose any class for any team.
    expect((await submit({ priorityClass: 'high' })).body).toMatchObject({ priority: 1000, priorityClass: 'high' });
  });

  it("the team's maxPriorityClass raises its members' ceiling; a class that is some team's ceiling cannot be deleted", async () => {
    const unknown = await h.request('PATCH', '/v1/teams/vision', { body: { maxPriorityClass: 'nope' } });
    expect(unknown.status).toBe(422);
    const patched = await h.request('PATCH', '/v1/teams/vision', { body: { maxPriorityClass: 'high' } });
    expect(patched.status).toBe(200);
    expect(patched.body.maxPriorityClass).toBe('high');
    const r = await submit({ priorityClass: 'high' }, alice, 'high-once');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ priority: 1000, priorityClass: 'high' });
    // The same key and body again: the same job.
    const again = await h.request('POST', '/v1/jobs', { body: jobBody({ name: `job-${submitted}`, priorityClass: 'high' }), token: alice, headers: { 'idempotency-key': 'high-once' } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(r.body.id);

    const del = await h.request('DELETE', '/v1/priority-classes/high');
    expect(del.status).toBe(409);
    expect(del.body.detail).toContain('vision');
    // nlp has no ceiling: its members are still held to the default.
    const bob = await memberToken(h, 'bob', ['nlp']);
    expect((await submit({ team: 'nlp', priorityClass: 'high' }, bob)).status).toBe(403);
  });

  it('making another class the default takes it from the first; deleting a class leaves jobs their priority', async () => {
    expect((await h.request('PUT', '/v1/priority-classes/batch', { body: { value: -100, default: true } })).status).toBe(200);
    const list = await h.request('GET', '/v1/priority-classes');
    expect(list.body.items.filter((c: { default: boolean }) => c.default).map((c: { name: string }) => c.name)).toEqual(['batch']);
    const job = await submit({}, alice);
    expect(job.body).toMatchObject({ priority: -100, priorityClass: 'batch' });
    expect((await h.request('PATCH', '/v1/teams/vision', { body: { maxPriorityClass: null } })).status).toBe(200);
    expect((await h.request('PUT', '/v1/priority-classes/batch', { body: { value: -100, default: false } })).status).toBe(200);
    expect((await h.request('DELETE', '/v1/priority-classes/batch')).status).toBe(204);
    const kept = await h.request('GET', `/v1/jobs/${job.body.id}`);
    expect(kept.body).toMatchObject({ priority: -100, priorityClass: 'batch' });
    // The audit trail has the class changes.
    const { rows } = await h.pg.query("SELECT kind FROM events WHERE kind LIKE 'priorityClass.%' ORDER BY id");
    expect(rows.map((r: { kind: string }) => r.kind)).toEqual(expect.arrayContaining(['priorityClass.created', 'priorityClass.updated', 'priorityClass.deleted']));
    // …and GET /v1/audit shows them to admins (they carry no team: members never see them).
    const audit = await h.request('GET', '/v1/audit?limit=200');
    const batch = audit.body.items.filter((e: { kind: string; data: { object?: string; name?: string } }) => e.kind.startsWith('priorityClass.') && JSON.stringify(e).includes('"batch"'));
    expect(batch.map((e: { kind: string }) => e.kind).sort()).toEqual(expect.arrayContaining(['priorityClass.created', 'priorityClass.deleted', 'priorityClass.updated']));
    const asMember = await h.request('GET', '/v1/audit?limit=200', { token: alice });
    expect(asMember.body.items.filter((e: { kind: string }) => e.kind.startsWith('priorityClass.'))).toEqual([]);
  });

  it('bad class bodies are 400 naming the field and change nothing', async () => {
    for (const [body, field] of [
      [{}, 'value'],
      [{ value: 1.5 }, 'value'],
      [{ value: 2_000_000 }, 'value'],
      [{ value: 1, default: 'yes' }, 'default'],
      [{ value: 1, description: 7 }, 'description'],
    ] as const) {
      const r = await h.request('PUT', '/v1/priority-classes/weird', { body });
      expect(r.status).toBe(400);
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await h.request('GET', '/v1/priority-classes/weird')).status).toBe(404);
    const both = await submit({ priority: 5, priorityClass: 'standard' });
    expect(both.status).toBe(400);
  });
});

describe('priority classes cached for QM_TOKEN_CACHE_TTL_MS, as tokens are', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_priority_cache', { QM_TOKEN_CACHE_TTL_MS: '600000' });
    await seedTenancy(h);
    await h.request('PUT', '/v1/priority-classes/standard', { body: { value: 0, default: true } });
    await h.request('PUT', '/v1/priority-classes/high', { body: { value: 1000 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("a change through this API applies at once; a team another replica created is looked up, never taken as one without a ceiling", async () => {
    const alice = await memberToken(h, 'alice', ['vision']);
    const ask = (team: string, token: string) => h.request('POST', '/v1/jobs', { body: jobBody({ team, priorityClass: 'high' }), token });
    expect((await ask('vision', alice)).status).toBe(403); // loads the cache: vision has no ceiling
    expect((await h.request('PATCH', '/v1/teams/vision', { body: { maxPriorityClass: 'high' } })).status).toBe(200);
    expect((await ask('vision', alice)).status).toBe(201);
    // Another replica creates team "audio" (written straight to the database: this process's cache has not seen it).
    await h.pg.query("INSERT INTO teams (name, cohort) VALUES ('audio', 'research')");
    const bob = await memberToken(h, 'bob', ['audio']);
    const r = await ask('audio', bob);
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain('up to the default class standard');
  });
});
