import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ApiApp } from '../../../apps/api/src/main.js';
import { createRedis } from '../../../apps/api/src/infra/redis.js';
import { type Harness, jobBody, memberToken, replicaOf, seedTenancy, startHarness } from './harness.js';

interface Answer {
  status: number;
  contentType: string;
  retryAfter: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
}

/** A request to the API at `base` with its Retry-After header (the harness's reply does not carry headers). */
async function send(base: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'), body: text === '' ? null : JSON.parse(text) };
}

async function pendingOf(h: Harness, team: string): Promise<number> {
  const { rows } = await h.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE team = $1 AND state = 'PENDING'`, [team]);
  return rows[0]!.n;
}

describe('per-team limits on pending jobs and submissions per second', () => {
  let h: Harness;
  let replica: { url: string; api: ApiApp };
  let alice: string;
  let nina: string;
  beforeAll(async () => {
    h = await startHarness('api_team_limits');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
    nina = await memberToken(h, 'nina', ['nlp']);
    replica = await replicaOf(h);
  });
  afterAll(async () => {
    await replica?.api.close();
    await h?.close();
  });

  it('a team shows its limits (the configured defaults until set); only admins set them (a member gets 403 and changes nothing)', async () => {
    const team = await h.ok('GET', '/v1/teams/vision');
    expect(team.limits).toEqual({ maxPendingJobs: 50000, submissionsPerSecond: 200, defaults: ['maxPendingJobs', 'submissionsPerSecond'] });

    const before = await h.counts();
    const refused = await h.request('PATCH', '/v1/teams/vision', { token: alice, body: { limits: { maxPendingJobs: 1000000 } } });
    expect(refused.status).toBe(403);
    expect(refused.contentType).toContain('application/problem+json');
    expect((await h.request('PUT', '/v1/teams/vision', { token: alice, body: { cohort: 'research', limits: { submissionsPerSecond: 1000000 } } })).status).toBe(403);
    expect(await h.counts()).toEqual(before);
    expect((await h.ok('GET', '/v1/teams/vision')).limits.defaults).toEqual(['maxPendingJobs', 'submissionsPerSecond']);

    const bad = await h.request('PATCH', '/v1/teams/vision', { body: { limits: { maxPendingJobs: 0, submissionsPerSecond: 'fast' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['limits.maxPendingJobs', 'limits.submissionsPerSecond']);
    const unknown = await h.request('PATCH', '/v1/teams/vision', { body: { limits: { maxPendingJobs: 5, burst: 3 } } });
    expect([unknown.status, unknown.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, ['limits.burst']]);

    const set = await h.request('PATCH', '/v1/teams/vision', { body: { limits: { maxPendingJobs: 7 } } });
    expect(set.status).toBe(200);
    expect(set.body.limits).toEqual({ maxPendingJobs: 7, submissionsPerSecond: 200, defaults: ['submissionsPerSecond'] });
    // Audited like every team change.
    const { rows } = await h.pg.query(`SELECT actor, data FROM events WHERE kind = 'team.updated' AND team = 'vision' ORDER BY id DESC LIMIT 1`);
    expect(rows[0].actor).toBe('admin');
    expect(rows[0].data.after.limits).toEqual({ maxPendingJobs: 7, submissionsPerSecond: null });
    // A PATCH of other fields keeps them; null brings the default back.
    expect((await h.ok('PATCH', '/v1/teams/vision', { fairShareWeight: 1 })).limits.maxPendingJobs).toBe(7);
    expect((await h.ok('PATCH', '/v1/teams/vision', { limits: { maxPendingJobs: null } })).limits).toEqual({
      maxPendingJobs: 50000,
      submissionsPerSecond: 200,
      defaults: ['maxPendingJobs', 'submissionsPerSecond'],
    });
  });

  it('50 parallel submissions over two API replicas never take a team past maxPendingJobs: the rest get 429 naming the limit, with Retry-After, and nothing is created for them', async () => {
    await h.ok('PATCH', '/v1/teams/vision', { limits: { maxPendingJobs: 10, submissionsPerSecond: 100000 } });
    const before = await h.counts();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => send(i % 2 === 0 ? h.url : replica.url, 'POST', '/v1/jobs', alice, jobBody({ name: `capped-${i}` }))),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(created).toHaveLength(10);
    expect(refused.map((a) => a.status)).toEqual(Array(40).fill(429));
    for (const a of refused) {
      expect(a.contentType).toContain('application/problem+json');
      expect(a.body).toMatchObject({ type: 'urn:quartermaster:problem:limit-exceeded', title: 'Team limit reached', status: 429, code: 'LIMIT_EXCEEDED', limit: 'maxPendingJobs' });
      expect(a.body.detail).toContain('team vision');
      expect(a.body.detail).toContain('maxPendingJobs = 10');
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(await pendingOf(h, 'vision')).toBe(10);
    const after = await h.counts();
    expect(after.jobs! - before.jobs!).toBe(10);
    expect(after.job_transitions! - before.job_transitions!).toBe(10);

    // Another team is not held back by it.
    expect((await send(h.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'other-team' }))).status).toBe(201);
    // A replay of a created job (same Idempotency-Key and body) is answered 200, not 429, while the team is full.
    await h.ok('PATCH', '/v1/teams/vision', { limits: { maxPendingJobs: 11 } });
    const keyed = await send(replica.url, 'POST', '/v1/jobs', alice, jobBody({ name: 'keyed' }), { 'idempotency-key': 'keyed-1' });
    expect(keyed.status).toBe(201);
    const replay = await send(h.url, 'POST', '/v1/jobs', alice, jobBody({ name: 'keyed' }), { 'idempotency-key': 'keyed-1' });
    expect([replay.status, replay.body.id]).toEqual([200, keyed.body.id]);
    expect((await send(h.url, 'POST', '/v1/jobs', alice, jobBody({ name: 'one-more' }))).status).toBe(429);
    // Room again once a pending job is cancelled.
    await h.ok('DELETE', `/v1/jobs/${keyed.body.id}`);
    expect((await send(replica.url, 'POST', '/v1/jobs', alice, jobBody({ name: 'after-cancel' }))).status).toBe(201);
    expect(await pendingOf(h, 'vision')).toBe(11);
  });

  it('beyond submissionsPerSecond (shared by the replicas) a submission gets 429 naming the limit, with Retry-After, and creates nothing', async () => {
    await h.ok('PATCH', '/v1/teams/nlp', { limits: { submissionsPerSecond: 1 } });
    const keyed = await send(h.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'rated-keyed' }), { 'Idempotency-Key': 'rated-keyed' });
    expect(keyed.status).toBe(201);
    const before = await pendingOf(h, 'nlp');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? h.url : replica.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: `rated-${i}` }))),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.status).toBe(429);
      expect(a.contentType).toContain('application/problem+json');
      expect(a.body).toMatchObject({ type: 'urn:quartermaster:problem:limit-exceeded', status: 429, limit: 'submissionsPerSecond' });
      expect(a.body.detail).toContain('team nlp');
      expect(a.body.detail).toContain('1 job(s) per second');
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect((await pendingOf(h, 'nlp')) - before).toBe(created.length);
    // The rate spent (the next submission is refused), a replay of the stored request creates nothing and is
    // answered as such, on either replica; the key with another body is the usual 409.
    expect((await send(replica.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'rated-again' }))).status).toBe(429);
    const replayed = await send(replica.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'rated-keyed' }), { 'Idempotency-Key': 'rated-keyed' });
    expect(replayed.status).toBe(200);
    expect(replayed.body.id).toBe(keyed.body.id);
    const reused = await send(h.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'rated-other' }), { 'Idempotency-Key': 'rated-keyed' });
    expect(reused.status).toBe(409);
    expect((await pendingOf(h, 'nlp')) - before).toBe(created.length);
    // Another team's rate is its own.
    await h.ok('PATCH', '/v1/teams/vision', { limits: null });
    expect((await send(replica.url, 'POST', '/v1/jobs', alice, jobBody({ name: 'own-rate' }))).status).toBe(201);
  });

  it('with Redis down the rate limit fails open: submissions are accepted (never a 5xx) and a warning is logged', async () => {
    const logs: string[] = [];
    const deadRedis = createRedis('redis://127.0.0.1:1', 300);
    const cut = await replicaOf(h, { redis: deadRedis, logs });
    try {
      await h.ok('PATCH', '/v1/teams/nlp', { limits: { submissionsPerSecond: 1 } });
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(cut.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: `open-${i}` }))));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(logs.join('\n')).toContain('submission rate limit not applied: Redis unavailable');
      // The pending cap is the database's: it still holds there.
      await h.ok('PATCH', '/v1/teams/nlp', { limits: { maxPendingJobs: 1 } });
      const full = await send(cut.url, 'POST', '/v1/jobs', nina, jobBody({ team: 'nlp', name: 'open-full' }));
      expect([full.status, full.body.limit]).toEqual([429, 'maxPendingJobs']);
    } finally {
      await cut.api.close();
      deadRedis.disconnect();
    }
  });
});
