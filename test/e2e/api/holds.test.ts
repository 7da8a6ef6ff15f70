// Holds (issue #30, Slurm's `scontrol hold` / `release`): a held PENDING job is passed over by the scheduler even
// with room for it, shows HELD and who holds it, and starts in its old place once released; members hold and
// release their teams' jobs, an admin's hold only an admin releases; bulk holds and releases by filter, audited.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

interface JobView {
  state: string;
  hold: { by: string; at: string; byAdmin: boolean } | null;
  pending: { code: string | null; message: string } | null;
}

describe('holding and releasing pending jobs', () => {
  let h: Harness;
  let alice: string;
  let bob: string;
  const submit = async (token: string, body: Record<string, unknown>): Promise<string> => {
    const r = await h.request('POST', '/v1/jobs', { token, body: jobBody(body) });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const job = async (id: string): Promise<JobView> => (await h.request('GET', `/v1/jobs/${id}`)).body as JobView;
  const cycle = () => h.ok('POST', '/v1/scheduler/cycles');

  beforeAll(async () => {
    h = await startHarness('api_holds');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
    bob = await memberToken(h, 'bob', ['nlp']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('passes a held job over while there is room for it, and admits it once released', async () => {
    const id = await submit(alice, { name: 'eval', replicas: 1, acceleratorsPerReplica: 1 });
    const held = await h.request('POST', `/v1/jobs/${id}/hold`, { token: alice });
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ state: 'PENDING', hold: { by: 'alice', byAdmin: false }, pending: { code: 'HELD' } });
    expect(held.body.pending.message).toContain('held by alice');

    // Room for it, and a cycle: it stays held, its reason untouched by the cycle.
    await cycle();
    expect(await job(id)).toMatchObject({ state: 'PENDING', pending: { code: 'HELD' } });
    // Holding it again answers it unchanged.
    expect((await h.request('POST', `/v1/jobs/${id}/hold`, { token: alice })).body.hold.at).toBe(held.body.hold.at);

    const released = await h.request('POST', `/v1/jobs/${id}/release`, { token: alice });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ state: 'PENDING', hold: null, pending: { code: null } });
    await cycle();
    expect((await job(id)).state).toBe('ADMITTED');
    const kinds = (await h.request('GET', `/v1/jobs/${id}/events`, { token: alice })).body.items.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['job.held', 'job.released']));
    // Releasing a job that is not held changes nothing; holding one that holds accelerators is a 409.
    expect((await h.request('POST', `/v1/jobs/${id}/release`, { token: alice })).status).toBe(200);
    const running = await h.request('POST', `/v1/jobs/${id}/hold`, { token: alice });
    expect(running.status).toBe(409);
    expect(running.body.detail).toContain('only a PENDING job can be held');
    await h.ok('DELETE', `/v1/jobs/${id}`);
  });

  it('keeps an admin’s hold from a member, and another team’s job from anyone else', async () => {
    const id = await submit(alice, { name: 'frozen', replicas: 1, acceleratorsPerReplica: 1 });
    expect((await h.request('POST', `/v1/jobs/${id}/hold`)).body.hold).toMatchObject({ by: 'admin', byAdmin: true });
    const refused = await h.request('POST', `/v1/jobs/${id}/release`, { token: alice });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('only an admin releases it');
    expect((await job(id)).hold).toMatchObject({ byAdmin: true });
    // bob (nlp) cannot see vision's job: 404, as for a missing one.
    expect((await h.request('POST', `/v1/jobs/${id}/hold`, { token: bob })).status).toBe(404);
    expect((await h.request('POST', `/v1/jobs/${id}/release`, { token: bob })).status).toBe(404);
    expect((await h.request('POST', `/v1/jobs/${id}/release`)).body.hold).toBeNull();
    await h.ok('DELETE', `/v1/jobs/${id}`);
  });

  it('holds and releases a team’s pending jobs by filter, oldest first, audited; a dry run changes nothing', async () => {
    const sweep = [await submit(alice, { name: 'sweep', replicas: 1, acceleratorsPerReplica: 64 }), await submit(alice, { name: 'sweep', replicas: 1, acceleratorsPerReplica: 64 })];
    const other = await submit(alice, { name: 'other', replicas: 1, acceleratorsPerReplica: 64 });

    const dry = await h.request('POST', '/v1/jobs/holds', { token: alice, body: { team: 'vision', name: 'sweep', dryRun: true } });
    expect(dry.body).toEqual({ changed: 0, jobs: sweep.map((id) => ({ id, name: 'sweep' })), more: false, dryRun: true });
    expect((await job(sweep[0]!)).hold).toBeNull();

    const first = await h.request('POST', '/v1/jobs/holds', { token: alice, body: { team: 'vision', name: 'sweep', limit: 1 } });
    expect(first.body).toEqual({ changed: 1, jobs: [{ id: sweep[0], name: 'sweep' }], more: true, dryRun: false });
    const rest = await h.request('POST', '/v1/jobs/holds', { token: alice, body: { team: 'vision', name: 'sweep' } });
    expect(rest.body.jobs).toEqual([{ id: sweep[1], name: 'sweep' }]);
    expect((await job(other)).hold).toBeNull();

    const audit = await h.request('GET', '/v1/audit?team=vision', { token: alice });
    expect(audit.body.items.filter((e: { kind: string }) => e.kind === 'jobs.held')).toHaveLength(2);

    expect((await h.request('POST', '/v1/jobs/holds', { token: bob, body: { team: 'vision' } })).status).toBe(403);
    const bad = await h.request('POST', '/v1/jobs/releases', { token: alice, body: { team: 'vision', limit: 0 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('limit');
    expect((await job(sweep[0]!)).hold).not.toBeNull();

    const released = await h.request('POST', '/v1/jobs/releases', { token: alice, body: { team: 'vision', name: 'sweep' } });
    expect(released.body).toMatchObject({ changed: 2, more: false });
    for (const id of sweep) expect((await job(id)).hold).toBeNull();
    for (const id of [...sweep, other]) await h.ok('DELETE', `/v1/jobs/${id}`);
  });
});
