import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * Executor tokens (role `executor`): an executor outside Kubernetes reads its teams' jobs and reports their
 * status — nothing else, and no other team's. A retried report of the state a job is already in is 200.
 */
let h: Harness;
let runner: string;
let alice: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function admitted(name: string, team: string): Promise<string> {
  const job = await ok('POST', '/v1/jobs', jobBody({ name, team, replicas: 1, acceleratorsPerReplica: 4 }));
  await ok('POST', '/v1/scheduler/cycles');
  return job.id as string;
}

beforeAll(async () => {
  h = await startHarness('api_executor');
  await seedTenancy(h);
  const created = await h.request('POST', '/v1/tokens', { body: { subject: 'runner-1', role: 'executor', teams: ['vision'] } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ subject: 'runner-1', role: 'executor', teams: ['vision'] });
  runner = created.body.token as string;
  alice = await memberToken(h, 'alice', ['vision']);
});

afterAll(async () => {
  await h?.close();
});

describe('executor tokens', () => {
  it('read their teams\' jobs and report their status; a retried report of the same state answers 200 and writes nothing', async () => {
    const id = await admitted('run-me', 'vision');
    expect((await h.request('GET', '/v1/whoami', { token: runner })).body).toMatchObject({ subject: 'runner-1', role: 'executor', teams: ['vision'] });
    const list = await h.request('GET', '/v1/jobs?state=ADMITTED', { token: runner });
    expect(list.status).toBe(200);
    expect(list.body.items.map((j: { id: string }) => j.id)).toEqual([id]);
    expect((await h.request('GET', `/v1/jobs/${id}`, { token: runner })).body.state).toBe('ADMITTED');
    expect((await h.request('GET', `/v1/jobs/${id}/events`, { token: runner })).status).toBe(200);

    const running = await h.request('POST', `/v1/jobs/${id}/status`, { token: runner, body: { state: 'RUNNING' } });
    expect(running.status).toBe(200);
    expect(running.body.state).toBe('RUNNING');
    const before = await h.counts();
    const retried = await h.request('POST', `/v1/jobs/${id}/status`, { token: runner, body: { state: 'RUNNING' } });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(running.body);
    expect(await h.counts()).toEqual(before);
    const events = await h.pg.query<{ actor: string }>(`SELECT actor FROM events WHERE job_id = $1 AND kind = 'job.running'`, [id]);
    expect(events.rows).toEqual([{ actor: 'runner-1' }]);

    expect((await h.request('POST', `/v1/jobs/${id}/status`, { token: runner, body: { state: 'SUCCEEDED' } })).status).toBe(200);
    expect((await h.request('POST', `/v1/jobs/${id}/status`, { token: runner, body: { state: 'SUCCEEDED' } })).status).toBe(200);
    const contradiction = await h.request('POST', `/v1/jobs/${id}/status`, { token: runner, body: { state: 'FAILED' } });
    expect(contradiction.status).toBe(409);
    expect(contradiction.body.detail).toBe(`job ${id} is SUCCEEDED and cannot become FAILED`);
  });

  it('cannot touch another team\'s job', async () => {
    const other = await admitted('not-yours', 'nlp');
    const before = await h.counts();
    const r = await h.request('POST', `/v1/jobs/${other}/status`, { token: runner, body: { state: 'RUNNING' } });
    expect(r.status).toBe(404);
    expect(r.body.detail).not.toContain('nlp');
    expect((await h.request('GET', `/v1/jobs/${other}`, { token: runner })).status).toBe(404);
    expect((await h.request('GET', '/v1/jobs?team=nlp', { token: runner })).status).toBe(403);
    expect(await h.counts()).toEqual(before);
  });

  it('may do nothing else: submit, cancel, tenancy, usage, scheduler, tokens are 403', async () => {
    const id = await admitted('still-mine', 'vision');
    const before = await h.counts();
    const calls: [string, string, unknown?][] = [
      ['POST', '/v1/jobs', jobBody({ name: 'sneaky' })],
      ['DELETE', `/v1/jobs/${id}`],
      ['GET', '/v1/teams'],
      ['PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 1000 }],
      ['GET', '/v1/usage'],
      ['GET', '/v1/budgets'],
      ['POST', '/v1/scheduler/cycles'],
      ['GET', '/v1/tokens'],
      ['GET', '/v1/flavors'],
    ];
    for (const [method, path, body] of calls) {
      const r = await h.request(method, path, { token: runner, ...(body === undefined ? {} : { body }) });
      expect({ method, path, status: r.status, detail: r.body.detail }).toEqual({
        method,
        path,
        status: 403,
        detail: "runner-1 is an executor token: it may only read its teams' jobs and report their status",
      });
    }
    expect(await h.counts()).toEqual(before);
  });

  it('members do not report status; an executor token needs teams', async () => {
    const id = await admitted('member-tries', 'vision');
    const r = await h.request('POST', `/v1/jobs/${id}/status`, { token: alice, body: { state: 'RUNNING' } });
    expect(r.status).toBe(403);
    expect(r.body.detail).toBe('alice is a member: job states are reported by admins and by executor tokens of team vision');
    const noTeams = await h.request('POST', '/v1/tokens', { body: { subject: 'runner-2', role: 'executor' } });
    expect(noTeams.status).toBe(400);
    expect(noTeams.body.errors).toEqual([{ field: 'teams', message: expect.stringMatching(/^must list at least 1/) }]);
  });
});
