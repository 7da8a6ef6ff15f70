import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ADMIN_TOKEN, type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

describe('auth: tokens, whoami, 401 and 403', () => {
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    h = await startHarness('api_auth');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('the bootstrap admin token (QM_ADMIN_TOKEN) is an admin', async () => {
    const r = await h.request('GET', '/v1/whoami');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ subject: 'admin', role: 'admin', teams: [], tokenId: null });
  });

  it('a created token is shown once and stored only as its sha256', async () => {
    const r = await h.request('POST', '/v1/tokens', { body: { subject: 'bob', role: 'member', teams: ['nlp'] } });
    expect(r.status).toBe(201);
    expect(r.body.token).toMatch(/^qm_[A-Za-z0-9_-]{32}$/);
    const { rows } = await h.pg.query('SELECT token_hash, subject, role, teams FROM api_tokens WHERE id = $1', [r.body.id]);
    expect(rows[0]).toEqual({ token_hash: createHash('sha256').update(r.body.token).digest('hex'), subject: 'bob', role: 'member', teams: ['nlp'] });
    const all = await h.pg.query('SELECT * FROM api_tokens');
    expect(JSON.stringify(all.rows)).not.toContain(r.body.token);
    const who = await h.request('GET', '/v1/whoami', { token: r.body.token });
    expect(who.body).toMatchObject({ subject: 'bob', role: 'member', teams: ['nlp'], tokenId: r.body.id });
  });

  it('missing, malformed or unknown tokens get 401 problem+json', async () => {
    const variants: Record<string, string>[] = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer not-a-token' }];
    for (const headers of variants) {
      const r = await h.request('GET', '/v1/whoami', { token: null, headers });
      expect(r.status).toBe(401);
      expect(r.contentType).toContain('application/problem+json');
      expect(r.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', title: expect.any(String), detail: expect.any(String) });
    }
    const wrongAdmin = await h.request('GET', '/v1/flavors', { token: `${ADMIN_TOKEN}x` });
    expect(wrongAdmin.status).toBe(401);
  });

  it('members may not write tenancy or create tokens (403), and nothing is written', async () => {
    const before = await h.counts();
    const attempts: [string, string, unknown][] = [
      ['POST', '/v1/tokens', { subject: 'eve', role: 'admin' }],
      ['PUT', '/v1/flavors/h200', { kind: 'nvidia-gpu' }],
      ['DELETE', '/v1/flavors/a100-80gb', undefined],
      ['PUT', '/v1/cohorts/other', {}],
      ['PUT', '/v1/teams/vision', { cohort: null }],
      ['PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 1000 }],
      ['DELETE', '/v1/teams/vision/quotas/h100-80gb', undefined],
      ['PUT', '/v1/nodes/gpu-9', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 1, memoryMiB: 1 }],
      ['POST', '/v1/scheduler/cycles', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const r = await h.request(method, path, { token: alice, body });
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 });
      expect(r.body.code).toBe('FORBIDDEN');
    }
    expect(await h.counts()).toEqual(before);
  });

  it('members read flavors, teams, cohorts and nodes', async () => {
    for (const path of ['/v1/flavors', '/v1/flavors/h100-80gb', '/v1/teams', '/v1/teams/nlp', '/v1/cohorts', '/v1/cohorts/research', '/v1/nodes', '/v1/scheduler']) {
      const r = await h.request('GET', path, { token: alice });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
  });

  it("a member submits for its own team only; another team's job is answered as a missing one (404, not 403: its id is not confirmed)", async () => {
    const own = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody() });
    expect(own.status).toBe(201);
    expect(own.body.createdBy).toBe('alice');
    const before = await h.counts();
    const foreign = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ team: 'nlp' }) });
    expect(foreign.status).toBe(403);
    expect(await h.counts()).toEqual(before);

    const nlpJob = await h.request('POST', '/v1/jobs', { body: jobBody({ team: 'nlp', name: 'bert' }) });
    expect(nlpJob.status).toBe(201);
    const snapshot = await h.counts();
    const missing = '00000000-0000-4000-8000-000000000000';
    const asMissing = async (method: string, suffix: string, body?: unknown): Promise<void> => {
      const theirs = await h.request(method, `/v1/jobs/${nlpJob.body.id}${suffix}`, { token: alice, ...(body === undefined ? {} : { body }) });
      const none = await h.request(method, `/v1/jobs/${missing}${suffix}`, { token: alice, ...(body === undefined ? {} : { body }) });
      expect(theirs.status).toBe(404);
      expect({ ...theirs.body, detail: theirs.body.detail.replace(nlpJob.body.id, missing) }).toEqual(none.body);
    };
    await asMissing('GET', '');
    await asMissing('GET', '/events');
    await asMissing('DELETE', '');
    await asMissing('POST', '/status', { state: 'RUNNING' });
    await asMissing('POST', '/progress', { completedFraction: 0.5 });
    expect((await h.request('GET', '/v1/jobs?team=nlp', { token: alice })).status).toBe(403);
    expect(await h.counts()).toEqual(snapshot);

    const listed = await h.request('GET', '/v1/jobs', { token: alice });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((j: { team: string }) => j.team)).toEqual(['vision']);
  });

  it('token requests are validated: role, teams, unknown team (422), nothing written', async () => {
    const before = await h.counts();
    const bad = await h.request('POST', '/v1/tokens', { body: { subject: '', role: 'root', teams: ['Not_A_Label'], extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['extra', 'role', 'subject', 'teams']);
    const noTeams = await h.request('POST', '/v1/tokens', { body: { subject: 'carol', role: 'member', teams: [] } });
    expect(noTeams.status).toBe(400);
    const unknown = await h.request('POST', '/v1/tokens', { body: { subject: 'carol', role: 'member', teams: ['vision', 'ghost'] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toContain('ghost');
    expect(await h.counts()).toEqual(before);
  });

  it('an admin lists tokens (no secrets) and revokes one: 204, then 401 for it; idempotent; 404, 409 and 403 change nothing', async () => {
    const created = await h.request('POST', '/v1/tokens', { body: { subject: 'leaky', role: 'member', teams: ['vision'] } });
    const { id, token } = created.body as { id: string; token: string };
    const list = await h.request('GET', '/v1/tokens');
    expect(list.status).toBe(200);
    expect(list.body.items.find((t: { id: string }) => t.id === id)).toEqual({ id, subject: 'leaky', role: 'member', teams: ['vision'], createdAt: expect.any(String), revokedAt: null, expiresAt: expect.any(String), lastUsedAt: null });
    expect(JSON.stringify(list.body)).not.toMatch(/qm_|token_hash|tokenHash/);
    expect((await h.request('GET', '/v1/tokens', { token })).status).toBe(403);
    expect((await h.request('DELETE', `/v1/tokens/${id}`, { token: alice })).status).toBe(403);

    const before = await h.counts();
    const revoked = await h.request('DELETE', `/v1/tokens/${id}`);
    expect(revoked.status).toBe(204);
    expect((await h.request('GET', '/v1/whoami', { token })).status).toBe(401);
    const { rows } = await h.pg.query('SELECT revoked_at FROM api_tokens WHERE id = $1', [id]);
    const first = rows[0].revoked_at as Date;
    expect(first).toBeInstanceOf(Date);
    expect((await h.request('DELETE', `/v1/tokens/${id}`)).status).toBe(204); // idempotent
    expect((await h.pg.query('SELECT revoked_at FROM api_tokens WHERE id = $1', [id])).rows[0].revoked_at).toEqual(first);
    expect((await h.request('GET', '/v1/tokens')).body.items.find((t: { id: string }) => t.id === id).revokedAt).toBe(first.toISOString());
    // The revocation wrote its audit event (token.revoked); the repeat wrote nothing.
    expect(await h.counts()).toEqual({ ...before, events: before.events! + 1 });

    for (const missing of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid']) {
      const r = await h.request('DELETE', `/v1/tokens/${missing}`);
      expect(r.status).toBe(404);
      expect(r.contentType).toContain('application/problem+json');
    }
    // An admin token cannot revoke itself.
    const admin2 = (await h.request('POST', '/v1/tokens', { body: { subject: 'ops', role: 'admin' } })).body as { id: string; token: string };
    const self = await h.request('DELETE', `/v1/tokens/${admin2.id}`, { token: admin2.token });
    expect(self.status).toBe(409);
    expect(self.body.detail).toMatch(/another admin token/);
    expect((await h.request('GET', '/v1/whoami', { token: admin2.token })).status).toBe(200);
  });

  it('answers carrying a token secret, and every token answer, are never cached: Cache-Control: no-store, Pragma: no-cache', async () => {
    const send = (method: string, path: string, body?: unknown): Promise<Response> =>
      fetch(`${h.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await send('POST', '/v1/tokens', { subject: 'carol', role: 'member', teams: ['vision'] });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { token: string }).token).toMatch(/^qm_/);
    for (const r of [created, await send('GET', '/v1/tokens'), await send('GET', '/v1/whoami')]) {
      expect(r.ok).toBe(true);
      expect([r.url, r.headers.get('cache-control'), r.headers.get('pragma')]).toEqual([r.url, 'no-store', 'no-cache']);
    }
  });

  it('creating and revoking a token are audited (token.created, token.revoked) with the actor, and no event holds the secret or its hash', async () => {
    const ops = (await h.request('POST', '/v1/tokens', { body: { subject: 'ops-lead', role: 'admin' } })).body as { id: string; token: string };
    const before = await h.counts();
    const created = await h.request('POST', '/v1/tokens', { token: ops.token, body: { subject: 'dave', role: 'member', teams: ['vision', 'nlp'] } });
    expect(created.status).toBe(201);
    const { id, token } = created.body as { id: string; token: string };
    expect((await h.request('DELETE', `/v1/tokens/${id}`)).status).toBe(204);
    expect((await h.request('DELETE', `/v1/tokens/${id}`)).status).toBe(204); // idempotent: audited once
    expect(await h.counts()).toEqual({ ...before, api_tokens: before.api_tokens! + 1, events: before.events! + 2 });

    const audit = await h.request('GET', '/v1/audit?limit=2');
    expect(audit.status).toBe(200);
    expect(audit.body.items).toEqual([
      { id: expect.any(String), at: expect.any(String), kind: 'token.revoked', team: null, actor: 'admin', message: expect.stringContaining(id), data: { token: id, subject: 'dave' } },
      {
        id: expect.any(String),
        at: expect.any(String),
        kind: 'token.created',
        team: null,
        actor: 'ops-lead',
        message: expect.stringContaining(id),
        data: { token: id, subject: 'dave', role: 'member', teams: ['vision', 'nlp'], expiresAt: expect.any(String) },
      },
    ]);
    // Admins only: a member of those teams does not see token events.
    const member = await h.request('GET', '/v1/audit?limit=200', { token: alice });
    expect(member.body.items.map((e: { kind: string }) => e.kind).filter((k: string) => k.startsWith('token.'))).toEqual([]);
    // Neither the secret nor its hash is anywhere in the events table.
    const hash = createHash('sha256').update(token).digest('hex');
    for (const secret of [token, hash, ops.token]) {
      const { rows } = await h.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE position($1 in events::text) > 0`, [secret]);
      expect(rows[0]!.n).toBe(0);
    }
  });
});
