import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChaosService, expectAlive, seed, startChaosService, waitFor } from './service.js';
import { jobLedger, startExecutor, submitStream } from './workload.js';

/** Jobs submitted so far that have been admitted (a transition to ADMITTED committed). */
async function admitted(s: ChaosService): Promise<number> {
  const { rows } = await s.pg.query<{ n: number }>(`SELECT count(DISTINCT job_id)::int AS n FROM job_transitions WHERE "to" = 'ADMITTED'`);
  return rows[0]!.n;
}

async function pendingOutbox(s: ChaosService): Promise<number> {
  const { rows } = await s.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE status = 'pending'`);
  return rows[0]!.n;
}

describe('chaos: Redis down', () => {
  let s: ChaosService;
  beforeAll(async () => {
    s = await startChaosService('redis_down');
    await seed(s);
  });
  afterAll(async () => {
    await s?.close();
  });

  it.each([
    ['refused', (x: ChaosService) => x.redis.reset()],
    ['black-holed', (x: ChaosService) => x.redis.blackhole()],
  ])('with Redis %s, jobs are still accepted and admitted on the tick; side effects flow once Redis is back', async (_, cut) => {
    const executor = startExecutor(s);
    const before = await admitted(s);
    cut(s);
    // Submitted and run to completion (the executor reports through the API) while Redis is down: every
    // one of them needs a cycle to admit it, with 2 nodes for 10 jobs of a whole node each.
    const result = await submitStream(s, 10, 2, undefined, `redis-${before}`);
    expect(result.serverErrors).toEqual([]);
    await waitFor('the jobs to be admitted with Redis down', async () => (await admitted(s)) >= before + 10, 120_000, 100);
    expectAlive(s);
    s.redis.heal();
    await waitFor('the outbox to drain once Redis is back', async () => (await pendingOutbox(s)) === 0, 120_000, 100);
    await executor.stop();
    const ledger = await jobLedger(s);
    expect(ledger.admittedTwice).toEqual([]);
    expect(executor.overAllocations).toEqual([]);
    expectAlive(s);
  });
});
