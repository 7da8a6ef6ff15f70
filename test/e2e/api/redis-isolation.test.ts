import { describe, expect, it } from '@jest/globals';
import { keysOf } from '../../support/redis-keys.js';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

// The run's REDIS_URL with another database index: where the suite's keys must go, and only there.
function otherDatabase(url: string, index: number): string {
  const u = new URL(url);
  u.pathname = `/${index}`;
  return u.toString();
}

describe('a test service uses the Redis it is given, and leaves no keys behind', () => {
  it('keys of its prefix appear in REDIS_URL while it runs, none in database 0, and none once it is closed', async () => {
    const base = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    const target = otherDatabase(base, 7);
    const previous = process.env['REDIS_URL'];
    process.env['REDIS_URL'] = target;
    let h: Harness | undefined;
    try {
      h = await startHarness('redis_isolation');
      expect(h.redisUrl).toBe(target);
      await seedTenancy(h);
      expect((await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'keyed' }), headers: { 'idempotency-key': 'keyed-1' } })).status).toBe(201);
      expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBeLessThan(300);
      const during = await keysOf(target, h.redisPrefix);
      expect(during.length).toBeGreaterThan(0);
      expect(await keysOf(otherDatabase(base, 0), h.redisPrefix)).toEqual([]);
      const prefix = h.redisPrefix;
      await h.close();
      h = undefined;
      expect(await keysOf(target, prefix)).toEqual([]);
    } finally {
      await h?.close();
      if (previous === undefined) delete process.env['REDIS_URL'];
      else process.env['REDIS_URL'] = previous;
    }
  });
});
