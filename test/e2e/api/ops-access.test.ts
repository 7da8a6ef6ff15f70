import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, startHarness } from './harness.js';

const METRICS_TOKEN = 'e2e-metrics-token-0123456789';

describe('with QM_METRICS_TOKEN set, /metrics and the detail of /readyz are for its bearer only', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_ops_access', { QM_METRICS_TOKEN: METRICS_TOKEN });
  });
  afterAll(async () => {
    await h.close();
  });

  it('/metrics: 401 problem+json without the token or with another (even an admin token), 200 with it', async () => {
    for (const token of [null, 'not-the-metrics-token-at-all', undefined]) {
      const r = await h.request('GET', '/metrics', { token });
      expect({ token, status: r.status, contentType: r.contentType }).toEqual({ token, status: 401, contentType: expect.stringContaining('application/problem+json') });
    }
    const ok = await h.request('GET', '/metrics', { token: METRICS_TOKEN });
    expect(ok.status).toBe(200);
    expect(String(ok.body)).toContain('qm_api_requests_total');
  });

  it('/readyz: status and ok per dependency for anyone; timings, errors and the leader only with the token', async () => {
    const anyone = await h.request('GET', '/readyz', { token: null });
    expect(anyone.status).toBe(200);
    expect(anyone.body).toEqual({ status: 'ready', checks: { postgres: { ok: true }, redis: { ok: true } } });
    const operator = await h.request('GET', '/readyz', { token: METRICS_TOKEN });
    expect(operator.body).toHaveProperty('leader');
    expect(operator.body.checks.postgres).toHaveProperty('ms');
  });
});

describe('without QM_METRICS_TOKEN both stay open (as before)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_ops_open');
  });
  afterAll(async () => {
    await h.close();
  });

  it('/metrics answers anyone', async () => {
    expect((await h.request('GET', '/metrics', { token: null })).status).toBe(200);
  });
});
