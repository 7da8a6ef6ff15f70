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

describe('chaos: Redis back, reconcile far away', () => {
  let s: ChaosService;
  beforeAll(async () => {
    // Reconcile, which re-offers every pending outbox entry, runs at election and then not for 10 min:
    // what flows here flows on the fast path (each commit's own entries handed to the queue).
    s = await startChaosService('redis_back', { QM_RECONCILE_EVERY_MS: '600000' });
    await seed(s);
  });
  afterAll(async () => {
    await s?.close();
  });

  it("with Redis up, enqueues a cycle's side effects right after its commit, after cycles that had none", async () => {
    // Cycles since election (after the seed's writes) had nothing to enqueue; this cycle's bind must not
    // wait for reconcile.
    await waitFor('cycles without side effects', async () => {
      const metrics = await fetch(`${s.api}/metrics`).then((r) => r.text());
      const total = /qm_scheduler_cycle_phase_seconds_count\{phase="total"\} (\d+)/.exec(metrics);
      return total !== null && Number(total[1]) >= 2;
    }, 60_000, 50);
    const result = await submitStream(s, 1, 1, undefined, 'redis-up');
    expect(result.serverErrors).toEqual([]);
    await waitFor('the job to be admitted', async () => (await admitted(s)) >= 1, 60_000, 100);
    await waitFor('its bind to be done without reconcile', async () => (await pendingOutbox(s)) === 0, 60_000, 100);
    const [id] = [...result.jobs.values()];
    const finished = await s.request('POST', `/v1/jobs/${id!}/status`, { state: 'SUCCEEDED', reason: 'exit code 0' });
    expect(finished.status).toBe(200);
    await waitFor('its delete to be done', async () => (await pendingOutbox(s)) === 0, 60_000, 100);
  });

  it('hands the side effects decided during a Redis outage to the queue once Redis is back, without waiting for reconcile', async () => {
    s.redis.reset();
    // Two whole-node jobs on two nodes: admitted on the tick while Redis refuses connections; their
    // bind side effects cannot be enqueued, so they wait in the outbox.
    const result = await submitStream(s, 2, 2, undefined, 'redis-back');
    expect(result.serverErrors).toEqual([]);
    await waitFor('the jobs to be admitted with Redis down', async () => (await admitted(s)) >= 3, 120_000, 100);
    expect(await pendingOutbox(s)).toBeGreaterThan(0);
    expectAlive(s);
    // Nothing else happens from here on (no submission, no status report), and reconcile is 10 minutes
    // away: the enqueue attempted during the outage (kept by the queue's client until Redis answers) does it.
    s.redis.heal();
    await waitFor('the outbox to drain once Redis is back', async () => (await pendingOutbox(s)) === 0, 90_000, 100);
    const ledger = await jobLedger(s);
    expect(ledger.admittedTwice).toEqual([]);
    expectAlive(s);
  });
});
