import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TokenRepository } from '#db';
import type { ApiApp } from '../../../apps/api/src/main.js';
import { TokenCache } from '../../../apps/api/src/auth/token-cache.js';
import { type Harness, replicaOf, seedTenancy, startHarness } from './harness.js';

// QM_TOKEN_CACHE_TTL_MS far longer than the test: nothing here depends on time passing.
describe('unknown tokens are remembered for QM_TOKEN_CACHE_TTL_MS (a negative cache), created ones are usable at once', () => {
  let h: Harness;
  let reads: jest.Spied<TokenRepository['findActiveByHash']>;
  beforeAll(async () => {
    h = await startHarness('api_token_cache', { QM_TOKEN_CACHE_TTL_MS: '600000' });
    await seedTenancy(h);
    // Every token lookup of the API goes through this repository method: each call is one Postgres read.
    reads = jest.spyOn(h.api.app.get(TokenRepository), 'findActiveByHash');
  });
  afterAll(async () => {
    reads.mockRestore();
    await h.close();
  });

  it('100 requests with the same unknown token read Postgres once; each is still 401', async () => {
    reads.mockClear();
    const unknown = 'qm_not-a-stored-token-at-all-0123456789';
    for (let i = 0; i < 100; i++) {
      const r = await h.request('GET', i % 2 === 0 ? '/v1/whoami' : '/v1/jobs', { token: unknown });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('UNAUTHENTICATED');
    }
    expect(reads).toHaveBeenCalledTimes(1);
    // Another unknown token is its own read; the bootstrap admin token never reads.
    expect((await h.request('GET', '/v1/whoami', { token: `${unknown}-2` })).status).toBe(401);
    expect((await h.request('GET', '/v1/whoami')).status).toBe(200);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('a token created through this process works on the very next request, and is then served from the cache', async () => {
    for (const role of ['member', 'executor'] as const) {
      const created = await h.request('POST', '/v1/tokens', { body: { subject: `fresh-${role}`, role, teams: ['vision'] } });
      expect(created.status).toBe(201);
      reads.mockClear();
      const who = await h.request('GET', '/v1/whoami', { token: created.body.token });
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({ subject: `fresh-${role}`, role, tokenId: created.body.id });
      for (let i = 0; i < 10; i++) expect((await h.request('GET', '/v1/whoami', { token: created.body.token })).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
    }
  });

  it('a token revoked through this process is refused on the very next request, although it was cached', async () => {
    const created = await h.request('POST', '/v1/tokens', { body: { subject: 'soon-gone', role: 'member', teams: ['vision'] } });
    expect((await h.request('GET', '/v1/whoami', { token: created.body.token })).status).toBe(200); // now cached for 10 min
    expect((await h.request('DELETE', `/v1/tokens/${created.body.id}`)).status).toBe(204);
    const after = await h.request('GET', '/v1/whoami', { token: created.body.token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('UNAUTHENTICATED');
  });
});

// Two replicas over one database and one Redis prefix, each caching tokens for 10 minutes: only the revocation's
// message can make the other refuse a token it has cached.
describe('a token revoked through one API replica is refused by every replica', () => {
  let h: Harness;
  let replica: { url: string; api: ApiApp };
  beforeAll(async () => {
    h = await startHarness('api_token_revocation', { QM_TOKEN_CACHE_TTL_MS: '600000' });
    await seedTenancy(h);
    replica = await replicaOf(h, { env: { QM_TOKEN_CACHE_TTL_MS: '600000' } });
  });
  afterAll(async () => {
    await replica?.api.close();
    await h?.close();
  });

  const whoamiAt = async (base: string, token: string): Promise<number> => (await fetch(`${base}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status;

  it('the other replica, which had it cached, refuses it once the revocation reaches it; the token is never accepted again', async () => {
    const created = await h.request('POST', '/v1/tokens', { body: { subject: 'leaving', role: 'member', teams: ['vision'] } });
    expect(await whoamiAt(replica.url, created.body.token)).toBe(200); // cached on the replica for 10 minutes
    const reads = jest.spyOn(replica.api.app.get(TokenRepository), 'findActiveByHash');
    expect(await whoamiAt(replica.url, created.body.token)).toBe(200);
    expect(reads).not.toHaveBeenCalled(); // served from its cache

    // The replica's cache drops it when the message comes: wait for that event.
    const dropped = new Promise<void>((resolve) => {
      const cache = replica.api.app.get(TokenCache);
      const revoked = cache.revoked.bind(cache);
      jest.spyOn(cache, 'revoked').mockImplementation((id: string) => {
        revoked(id);
        if (id === created.body.id) resolve();
      });
    });
    expect((await h.request('DELETE', `/v1/tokens/${created.body.id}`)).status).toBe(204);
    await dropped;
    expect(await whoamiAt(replica.url, created.body.token)).toBe(401);
    expect(await whoamiAt(h.url, created.body.token)).toBe(401);
    reads.mockRestore();
  });
});
