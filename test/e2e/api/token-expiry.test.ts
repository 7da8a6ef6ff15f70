import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, type Reply, seedTenancy, startHarness } from './harness.js';

const DAY_MS = 86_400_000;

/** Polls `read` every 100 ms, at most 100 times, until `done` says so; the last answer. */
async function poll(read: () => Promise<Reply>, done: (r: Reply) => boolean): Promise<Reply> {
  let r = await read();
  for (let i = 0; i < 100 && !done(r); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    r = await read();
  }
  return r;
}

describe('tokens: expiresAt, the default expiry, lastUsedAt', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_token_expiry');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const listed = async (id: string): Promise<Record<string, unknown>> => ((await h.ok('GET', '/v1/tokens')).items as { id: string }[]).find((t) => t.id === id)!;

  it('a token created without expiresAt expires after QM_TOKEN_TTL_DAYS (90); one that never expires must be asked for; expiresAt must be in the future', async () => {
    const asked = Date.now();
    const member = await h.request('POST', '/v1/tokens', { body: { subject: 'alice', role: 'member', teams: ['vision'] } });
    expect(member.status).toBe(201);
    const expires = Date.parse(member.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(asked + 90 * DAY_MS - DAY_MS);
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY_MS);
    expect(await listed(member.body.id)).toMatchObject({ expiresAt: member.body.expiresAt, lastUsedAt: null });

    const nulls = await h.request('POST', '/v1/tokens', { body: { subject: 'bob', role: 'member', teams: ['vision'], expiresAt: null, neverExpires: null } });
    expect(nulls.status).toBe(201);
    expect(nulls.body.expiresAt).not.toBeNull();

    const never = await h.request('POST', '/v1/tokens', { body: { subject: 'ci', role: 'admin', neverExpires: true } });
    expect(never.status).toBe(201);
    expect(never.body.expiresAt).toBeNull();
    expect(await listed(never.body.id)).toMatchObject({ expiresAt: null });

    const at = '2099-01-02T03:04:05.000Z';
    const chosen = await h.request('POST', '/v1/tokens', { body: { subject: 'carol', role: 'executor', teams: ['nlp'], expiresAt: at } });
    expect([chosen.status, chosen.body.expiresAt]).toEqual([201, at]);
    // The audit event says when it expires (and never holds the secret).
    const { rows } = await h.pg.query(`SELECT data FROM events WHERE kind = 'token.created' AND data->>'token' = $1`, [chosen.body.id]);
    expect(rows[0].data).toMatchObject({ token: chosen.body.id, expiresAt: at });
    expect(JSON.stringify(rows)).not.toContain(chosen.body.token);

    const before = await h.counts();
    const both = await h.request('POST', '/v1/tokens', { body: { subject: 'dave', role: 'member', teams: ['vision'], expiresAt: at, neverExpires: true } });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([{ field: 'neverExpires', message: 'must not be true together with expiresAt' }]);
    const past = await h.request('POST', '/v1/tokens', { body: { subject: 'dave', role: 'member', teams: ['vision'], expiresAt: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual([{ field: 'expiresAt', message: 'must be in the future' }]);
    const garbled = await h.request('POST', '/v1/tokens', { body: { subject: 'dave', role: 'member', teams: ['vision'], expiresAt: 'tomorrow' } });
    expect([garbled.status, garbled.body.errors[0].field]).toEqual([400, 'expiresAt']);
    expect(await h.counts()).toEqual(before);
  });

  it('an expired token is refused 401 with a problem+json that says it expired', async () => {
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const created = await h.request('POST', '/v1/tokens', { body: { subject: 'erin', role: 'member', teams: ['vision'], expiresAt } });
    expect([created.status, created.body.expiresAt]).toEqual([201, expiresAt]);
    const token = created.body.token as string;
    expect((await h.request('GET', '/v1/whoami', { token })).status).toBe(200);
    const refused = await poll(
      () => h.request('GET', '/v1/whoami', { token }),
      (r) => r.status !== 200,
    );
    expect(refused.status).toBe(401);
    expect(refused.contentType).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ type: 'urn:quartermaster:problem:token-expired', title: 'Token expired', status: 401, code: 'TOKEN_EXPIRED' });
    expect(refused.body.detail).toContain(`expired at ${expiresAt}`);
    expect(refused.body.detail).not.toContain(token);
    // Every route refuses it, not only whoami.
    expect((await h.request('GET', '/v1/jobs', { token })).status).toBe(401);
  });

  it('lastUsedAt is recorded when a token is used and shown in the listing; a second use within the minute writes nothing', async () => {
    const created = await h.request('POST', '/v1/tokens', { body: { subject: 'frank', role: 'member', teams: ['vision'] } });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect(await listed(created.body.id)).toMatchObject({ lastUsedAt: null });
    expect((await h.request('GET', '/v1/whoami', { token })).status).toBe(200);
    let shown = await listed(created.body.id);
    for (let i = 0; i < 100 && shown.lastUsedAt === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      shown = await listed(created.body.id);
    }
    expect(typeof shown.lastUsedAt).toBe('string');
    expect(Date.parse(shown.lastUsedAt as string)).toBeGreaterThanOrEqual(Date.parse(created.body.createdAt));
    expect((await h.request('GET', '/v1/jobs', { token })).status).toBe(200);
    const { rows } = await h.pg.query<{ last_used_at: Date }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [created.body.id]);
    expect(rows[0]!.last_used_at.toISOString()).toBe(shown.lastUsedAt);
  });
});
