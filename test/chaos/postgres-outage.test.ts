import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChaosService, expectAlive, seed, startChaosService, until, waitFor } from './service.js';
import { jobLedger, startExecutor, submitStream } from './workload.js';

describe('chaos: Postgres connections reset under load', () => {
  let s: ChaosService;
  beforeAll(async () => {
    s = await startChaosService('pg_reset');
    await seed(s);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('the process stays up through three resets during a stream of submissions, and no job is lost or admitted twice', async () => {
    const executor = startExecutor(s);
    let answers = 0;
    const stream = submitStream(s, 60, 8, () => answers++);
    for (let outage = 0; outage < 3; outage++) {
      const before = answers;
      await until('submissions flowing', () => answers >= before + 10 || !s.alive(), 120_000);
      expectAlive(s);
      s.postgres.reset();
      const during = answers;
      // Down until the clients have seen it (several answers or failures), then back.
      await until('clients to notice the outage', () => answers >= during + 6 || !s.alive());
      s.postgres.heal();
      expectAlive(s);
    }
    const result = await stream;
    await waitFor('every job to finish', async () => (await jobLedger(s)).states['SUCCEEDED'] === 60, 120_000, 100);
    await executor.stop();

    expectAlive(s);
    const ledger = await jobLedger(s);
    expect(ledger.total).toBe(60);
    expect(result.jobs.size).toBe(60);
    expect(ledger.admittedTwice).toEqual([]);
    expect(executor.overAllocations).toEqual([]);
  });
});
