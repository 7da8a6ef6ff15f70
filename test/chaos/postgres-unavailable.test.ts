import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChaosService, type Reply, expectAlive, jobBody, seed, startChaosService, waitFor } from './service.js';

/** A mix of reads and writes, as clients send them. */
function requests(s: ChaosService, tag: string): Promise<Reply>[] {
  return [
    s.request('GET', '/v1/jobs'),
    s.request('GET', '/v1/teams/vision'),
    s.request('POST', '/v1/jobs', jobBody(`outage-${tag}`), { 'idempotency-key': `outage-${tag}` }),
    s.request('PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: null }),
    s.request('GET', '/v1/queue'),
  ];
}

function expectRetryLater(replies: Reply[]): void {
  for (const r of replies) {
    expect({ status: r.status, contentType: r.contentType, code: r.body?.code, retryAfter: r.retryAfter }).toEqual({
      status: 503,
      contentType: expect.stringContaining('application/problem+json'),
      code: 'DATABASE_UNAVAILABLE',
      retryAfter: '1',
    });
  }
}

describe('chaos: Postgres unreachable', () => {
  let s: ChaosService;
  beforeAll(async () => {
    // No client-side query timeout: only the link watchdog can end a query stuck on a black-holed link.
    s = await startChaosService('pg_down', { QM_DB_QUERY_TIMEOUT_MS: '0', QM_DB_STATEMENT_TIMEOUT_MS: '0' });
    await seed(s);
  });
  afterAll(async () => {
    await s?.close();
  });

  const recovers = async (): Promise<void> => {
    await waitFor('the API to answer again', async () => (await s.request('GET', '/v1/jobs')).status === 200);
    await waitFor('/readyz to be ready again', async () => (await s.request('GET', '/readyz')).status === 200);
    const r = await s.request('POST', '/v1/jobs', jobBody('after'), { 'idempotency-key': `after-${Math.random()}` });
    expect(r.status).toBe(201);
    expectAlive(s);
  };

  it('answers 503 DATABASE_UNAVAILABLE with Retry-After, never 500, while connections are refused; /readyz is 503; recovers by itself', async () => {
    s.postgres.reset();
    expectRetryLater(await Promise.all(requests(s, 'refused')));
    expect((await s.request('GET', '/readyz')).status).toBe(503);
    s.postgres.heal();
    await recovers();
  });

  it('answers 503 instead of hanging while Postgres is black-holed (requests in flight included), and recovers', async () => {
    const inFlight = requests(s, 'in-flight');
    s.postgres.blackhole();
    const during = requests(s, 'blackholed');
    // The helper aborts a request after 30 s: a hung request fails the test.
    const replies = await Promise.all([...inFlight, ...during]);
    // A request that was answered before the link went silent is fine; none may be a 5xx other than 503.
    // On failure, the service's own log line says what it could not classify.
    const failed = replies.filter((r) => r.status >= 500 && r.status !== 503);
    const logged = s.proc.lines.filter((l) => l['msg'] === 'request failed').map((l) => ({ url: l['url'], err: l['err'] }));
    expect({ failed, logged }).toEqual({ failed: [], logged: [] });
    expectRetryLater(await Promise.all(requests(s, 'blackholed-2')));
    expect((await s.request('GET', '/readyz')).status).toBe(503);
    s.postgres.heal();
    await recovers();
  });
});
