// POST /v1/jobs/cancellations (issue #30): a team's jobs cancelled by filter — state, name, submitter — oldest
// first, at most `limit` per call with `more` for the rest, each as DELETE /v1/jobs/{id} cancels one; members only
// for their teams; a bad filter is a 400 naming the field and cancels nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

describe('bulk cancel by filter', () => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let carol: string;
  const submit = async (token: string, body: Record<string, unknown>): Promise<string> => {
    const r = await h.request('POST', '/v1/jobs', { token, body: jobBody(body) });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const stateOf = async (id: string): Promise<string> => (await h.request('GET', `/v1/jobs/${id}`)).body.state as string;

  beforeAll(async () => {
    h = await startHarness('api_bulk_cancel');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
    carol = await memberToken(h, 'carol', ['vision']);
    bob = await memberToken(h, 'bob', ['nlp']);
  });
  afterAll(async () => {
    await h.close();
  });

  it("cancels the team's jobs that match, oldest first, and no others", async () => {
    const sweep = [await submit(alice, { name: 'sweep' }), await submit(alice, { name: 'sweep' }), await submit(carol, { name: 'sweep' })];
    const keep = await submit(alice, { name: 'keep' });
    const theirs = await submit(bob, { team: 'nlp', name: 'sweep' });

    // Only alice's sweeps.
    const mine = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'sweep', createdBy: 'alice' } });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ cancelled: 2, more: false, dryRun: false, jobs: [{ id: sweep[0], name: 'sweep', from: 'PENDING' }, { id: sweep[1], name: 'sweep', from: 'PENDING' }] });
    // One audit entry: who, how many, by which filter, which jobs; the team's members read it.
    const audit = await h.request('GET', '/v1/audit?team=vision&limit=1', { token: carol });
    expect(audit.body.items[0]).toMatchObject({ kind: 'jobs.cancelled', team: 'vision', actor: 'alice', message: '2 job(s) of team vision cancelled by alice (states PENDING,ADMITTED,BINDING,RUNNING, name sweep, createdBy alice)' });
    expect(await stateOf(sweep[2]!)).toBe('PENDING');
    const all = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'sweep', states: ['PENDING'] } });
    expect(all.body).toMatchObject({ cancelled: 1, more: false, jobs: [{ id: sweep[2] }] });
    for (const id of sweep) expect(await stateOf(id)).toBe('CANCELLED');
    expect(await stateOf(keep)).toBe('PENDING');
    expect(await stateOf(theirs)).toBe('PENDING');
    // As a single cancel: its transition says who.
    const job = await h.request('GET', `/v1/jobs/${sweep[0]}`);
    expect(job.body.transitions.at(-1)).toMatchObject({ from: 'PENDING', to: 'CANCELLED', reason: 'cancelled by alice' });
    // Nothing left to match: an empty answer, not an error.
    expect((await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'sweep' } })).body).toEqual({ cancelled: 0, jobs: [], more: false, dryRun: false });
  });

  it('answers a dry run with the jobs it would cancel, changing nothing', async () => {
    const id = await submit(alice, { name: 'maybe' });
    const before = await h.counts();
    const dry = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'maybe', dryRun: true } });
    expect(dry.body).toEqual({ cancelled: 0, dryRun: true, more: false, jobs: [{ id, name: 'maybe', from: 'PENDING' }] });
    expect(await h.counts()).toEqual(before);
    expect(await stateOf(id)).toBe('PENDING');
  });

  it('goes `limit` at a time and says when more matched', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await submit(alice, { name: 'batch' }));
    const first = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'batch', limit: 3 } });
    expect(first.body).toMatchObject({ cancelled: 3, more: true });
    expect(first.body.jobs.map((j: { id: string }) => j.id)).toEqual(ids.slice(0, 3));
    const rest = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body: { team: 'vision', name: 'batch', limit: 3 } });
    expect(rest.body).toMatchObject({ cancelled: 2, more: false });
    for (const id of ids) expect(await stateOf(id)).toBe('CANCELLED');
  });

  it("refuses another team's jobs (403) and a bad filter (400 naming the field), cancelling nothing", async () => {
    const pending = await submit(alice, { name: 'guarded' });
    const before = await h.counts();
    expect((await h.request('POST', '/v1/jobs/cancellations', { token: bob, body: { team: 'vision' } })).status).toBe(403);
    for (const [body, field] of [
      [{}, 'team'],
      [{ team: 'vision', states: ['DONE'] }, 'states'],
      [{ team: 'vision', states: [] }, 'states'],
      [{ team: 'vision', states: ['PENDING', 'PENDING'] }, 'states'],
      [{ team: 'vision', limit: 0 }, 'limit'],
      [{ team: 'vision', limit: 1001 }, 'limit'],
      [{ team: 'vision', name: 'Not A Name' }, 'name'],
      [{ team: 'vision', dryRun: 'yes' }, 'dryRun'],
    ] as const) {
      const r = await h.request('POST', '/v1/jobs/cancellations', { token: alice, body });
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await h.counts()).toEqual(before);
    expect(await stateOf(pending)).toBe('PENDING');
  });
});
