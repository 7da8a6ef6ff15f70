import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from './config.js';
import { checkDependency, checkReadiness, opsAccessAllowed, publicReadiness } from './readiness.js';

const never = (): Promise<unknown> => new Promise(() => undefined);

describe('readiness', () => {
  it('a probe that answers is ok; one that throws says why, prefixed with what it probes', async () => {
    expect(await checkDependency({ probe: () => Promise.resolve('PONG') })).toEqual({ ok: true, ms: expect.any(Number) });
    expect(await checkDependency({ probe: () => Promise.reject(new Error('ECONNREFUSED')), what: 'redis at redis://h:6379' })).toEqual({
      ok: false,
      ms: expect.any(Number),
      error: 'redis at redis://h:6379: ECONNREFUSED',
    });
  });

  it('with a timeout, a probe that never answers is not ok', async () => {
    expect(await checkDependency({ probe: never }, 10)).toEqual({ ok: false, ms: expect.any(Number), error: 'no answer within 10 ms' });
  });

  it('ready only when both answer; the public view has no timings or error text', async () => {
    const up = await checkReadiness({ postgres: { probe: () => Promise.resolve(1) }, redis: { probe: () => Promise.resolve(1) } });
    expect([up.ready, up.status]).toEqual([true, 'ready']);
    const down = await checkReadiness({ postgres: { probe: () => Promise.resolve(1) }, redis: { probe: never } }, 10);
    expect([down.ready, down.status, down.checks.redis.error]).toEqual([false, 'unavailable', 'no answer within 10 ms']);
    expect(publicReadiness(down)).toEqual({ status: 'unavailable', checks: { postgres: { ok: true }, redis: { ok: false } } });
  });

  it('everything is shown without a metrics token, else only to its bearer', () => {
    const hash = sha256Hex('metrics-secret');
    expect(opsAccessAllowed(undefined, null)).toBe(true);
    expect(opsAccessAllowed(undefined, hash)).toBe(false);
    expect(opsAccessAllowed('Bearer wrong', hash)).toBe(false);
    expect(opsAccessAllowed('Bearer metrics-secret', hash)).toBe(true);
  });
});
