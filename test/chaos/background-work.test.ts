import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { type ChaosService, expectAlive, seed, startChaosService, waitFor } from './service.js';

describe('chaos: background work during a Postgres outage', () => {
  let s: ChaosService;
  beforeAll(async () => {
    // The budget watcher every 100 ms (30 s by default): its checks fail throughout the outage.
    s = await startChaosService('pg_background', { QM_BUDGET_CHECK_INTERVAL_MS: '100' });
    await seed(s);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('the budget watcher failing on a lost Postgres does not take the process down', async () => {
    s.postgres.reset();
    // Several failed checks (each one crashed the process before: an unhandled rejection of its bookkeeping promise).
    const until = Date.now() + 2000;
    while (Date.now() < until && s.alive()) await new Promise((resolve) => setTimeout(resolve, 100));
    expectAlive(s);
    s.postgres.heal();
    await waitFor('the API to answer again', async () => (await s.request('GET', '/v1/jobs')).status === 200);
    expectAlive(s);
  });
});
