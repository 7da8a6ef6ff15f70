import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

describe('Idempotency-Keys belong to a token, not to its free-text subject', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_idem_scope');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const submit = (token: string | undefined, body: Record<string, unknown>, key: string) =>
    h.request('POST', '/v1/jobs', { token, body, headers: { 'idempotency-key': key } });

  it('two tokens named "sam" in different teams each get their own job for the same key; neither sees the other', async () => {
    const visionSam = await memberToken(h, 'sam', ['vision']);
    const nlpSam = await memberToken(h, 'sam', ['nlp']);
    const a = await submit(visionSam, jobBody({ team: 'vision', name: 'sam-a' }), 'nightly-1');
    const b = await submit(nlpSam, jobBody({ team: 'nlp', name: 'sam-b' }), 'nightly-1');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.team).toBe('nlp');
    // Each token's retry replays its own job.
    const again = await submit(nlpSam, jobBody({ team: 'nlp', name: 'sam-b' }), 'nightly-1');
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 200, id: b.body.id });
    // Another body under the same key is a 409 that names only the token's own job.
    const other = await submit(nlpSam, jobBody({ team: 'nlp', name: 'sam-c' }), 'nightly-1');
    expect(other.status).toBe(409);
    expect(other.body.detail).toContain(b.body.id);
    expect(other.body.detail).not.toContain(a.body.id);
  });

  it('a member token named "admin" does not share the bootstrap admin token\'s keys', async () => {
    const fakeAdmin = await memberToken(h, 'admin', ['vision']);
    const real = await submit(undefined, jobBody({ team: 'nlp', name: 'admin-job' }), 'k-admin');
    const member = await submit(fakeAdmin, jobBody({ team: 'vision', name: 'member-job' }), 'k-admin');
    expect([real.status, member.status]).toEqual([201, 201]);
    expect(JSON.stringify(member.body)).not.toContain(real.body.id);
  });

  it('the same subject with two tokens of one team: keys are still per token', async () => {
    const first = await memberToken(h, 'ci', ['vision']);
    const second = await memberToken(h, 'ci', ['vision']);
    const a = await submit(first, jobBody({ name: 'ci-1' }), 'build-7');
    const b = await submit(second, jobBody({ name: 'ci-2' }), 'build-7');
    expect([a.status, b.status]).toEqual([201, 201]);
    const { rows } = await h.pg.query<{ n: number }>("SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'build-7'");
    expect(rows[0]!.n).toBe(2);
  });
});
