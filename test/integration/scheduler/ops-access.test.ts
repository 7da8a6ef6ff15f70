// The scheduler's and worker's own ports (QM_SCHEDULER_PORT, QM_WORKER_PORT) follow the API's rule for
// QM_METRICS_TOKEN: /metrics for its bearer only, /readyz without detail for everyone else, /healthz open.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '#db';
import { childEnv } from './env.js';
import { spawnRole, type RoleProcess } from './processes.js';
import { flushPrefix, uniquePrefix, waitFor } from './support.js';

jest.setTimeout(180_000);

const METRICS_TOKEN = 'ops-metrics-token-0123456789abcdef';

interface Answer {
  status: number;
  contentType: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever came back
  body: any;
}

async function get(url: string, token?: string): Promise<Answer> {
  const res = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // the metrics text format
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body };
}

describe('scheduler and worker ports with QM_METRICS_TOKEN set', () => {
  let testDb: TestDatabase;
  let prefix: string;
  const running: RoleProcess[] = [];
  const urls: Record<'scheduler' | 'worker', string> = { scheduler: '', worker: '' };

  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'sched_ops_access' });
    prefix = uniquePrefix('ops-access');
    const env = childEnv(testDb.url, prefix, { QM_METRICS_TOKEN: METRICS_TOKEN });
    const scheduler = spawnRole('scheduler', env);
    const worker = spawnRole('worker', env);
    running.push(scheduler, worker);
    [urls.scheduler, urls.worker] = await Promise.all([scheduler.ready, worker.ready]);
    // The scheduler elects itself (so /readyz has a leader to hide).
    await waitFor('the scheduler to lead', async () => (await get(`${urls.scheduler}/readyz`, METRICS_TOKEN)).body?.scheduler?.leader === true);
  });

  afterAll(async () => {
    await Promise.all(running.map((p) => p.kill('SIGTERM')));
    await flushPrefix(prefix);
    await testDb?.drop();
  });

  it.each(['scheduler', 'worker'] as const)('%s: /metrics is 401 problem+json without the token or with another, 200 with it', async (role) => {
    for (const token of [undefined, 'not-the-metrics-token-at-all', 'scheduler-test-admin-token-0123456789']) {
      const r = await get(`${urls[role]}/metrics`, token);
      expect({ token, status: r.status, contentType: r.contentType, code: r.body?.code }).toEqual({
        token,
        status: 401,
        contentType: expect.stringContaining('application/problem+json'),
        code: 'UNAUTHENTICATED',
      });
    }
    const ok = await get(`${urls[role]}/metrics`, METRICS_TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.contentType).toContain('text/plain');
    expect(String(ok.body)).toContain('qm_scheduler_');
  });

  it.each(['scheduler', 'worker'] as const)('%s: /readyz shows others only the status and ok per dependency; the detail needs the token', async (role) => {
    const anyone = await get(`${urls[role]}/readyz`);
    expect(anyone.status).toBe(200);
    expect(anyone.body).toEqual({ status: 'ready', checks: { postgres: { ok: true }, redis: { ok: true } } });
    const operator = await get(`${urls[role]}/readyz`, METRICS_TOKEN);
    expect(operator.body).toMatchObject({ status: 'ready', role, checks: { postgres: { ok: true, ms: expect.any(Number) }, redis: { ok: true } } });
    if (role === 'scheduler') expect(operator.body.scheduler.holder).toEqual(expect.stringMatching(/:\d+:/)); // host:pid:random
  });

  it.each(['scheduler', 'worker'] as const)('%s: /healthz stays open (liveness probes carry no token)', async (role) => {
    expect(await get(`${urls[role]}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
