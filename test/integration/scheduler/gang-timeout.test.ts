import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCycle } from '#core';
import { Database, FencingError, acquireOrRenewLease, createTestDatabase, type TestDatabase } from '#db';
import {
  CycleRunner,
  OutboxRelay,
  PgCycleLock,
  PgCycleStore,
  PgOutboxStore,
  PgReconcileStore,
  Reconciler,
  SideEffectQueue,
  redisConnection,
  type FencingSource,
} from '#scheduling';
import { seedFleet, submitJobs } from './fleet.js';
import { REDIS_URL, flushPrefix, silentLogger, uniquePrefix } from './support.js';

let testDb: TestDatabase;
let db: Database;
const prefix = uniquePrefix('gang');
let queue: SideEffectQueue;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_gang' });
  db = new Database(testDb.url, { poolSize: 6 });
  queue = new SideEffectQueue({ connection: redisConnection(REDIS_URL), prefix, attempts: 1, backoffMs: 10 });
});

afterAll(async () => {
  await queue.close();
  await flushPrefix(prefix);
  await db.close();
  await testDb.drop();
});

const GANG_TIMEOUT_MS = 60_000;
const BACKOFF = { requeueBackoffBaseMs: 10_000, requeueBackoffMaxMs: 40_000 };

interface JobRow {
  state: string;
  queued_at: Date;
  admitted_at: Date | null;
  allocations: number;
  requeues: number;
}

async function job(id: string): Promise<JobRow> {
  const { rows } = await db.pool.query<JobRow>(
    `SELECT state::text AS state, queued_at, admitted_at, (SELECT count(*)::int FROM allocations WHERE job_id = j.id) AS allocations,
            (SELECT count(*)::int FROM job_transitions WHERE job_id = j.id AND reason LIKE 'gang-timeout%') AS requeues
     FROM jobs j WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

describe('gang timeout (standalone: admitted but never RUNNING)', () => {
  it('requeues the gang with its allocation released, keeps it out of cycles until its not-before, and doubles the backoff', async () => {
    await seedFleet(db.pool, { nodes: 2, perNode: 8 });
    const holder = 'test-leader';
    const lease = await acquireOrRenewLease(db, 'scheduler', holder, 3_600_000);
    let now = 0;
    const clock = (): number => now;
    const lock = new PgCycleLock(db.pool);
    const fencing: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder }) };
    const runner = new CycleRunner(new PgCycleStore(db, lock), fencing, runCycle, silentLogger, [], clock);
    const reconcile = new Reconciler(new PgReconcileStore(db.pool, lock), new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger), { gangTimeoutMs: GANG_TIMEOUT_MS, ...BACKOFF }, silentLogger, undefined, clock);
    const fence = { leaseName: 'scheduler', token: lease.fencingToken };

    const [id] = await submitJobs(db.pool, 1, { tag: 'stuck', replicas: 2, perReplica: 8 });
    now = Date.now() + 1;
    expect((await runner.runOnce(['test'])).result.admissions.map((a) => a.jobId)).toEqual([id]);

    // Within the timeout nothing happens.
    now += GANG_TIMEOUT_MS / 2;
    expect((await reconcile.run(fence)).requeued).toEqual([]);

    // After it: back to PENDING, allocation released, not before now + 10 s.
    now += GANG_TIMEOUT_MS;
    const first = await reconcile.run(fence);
    expect(first.requeued.map((r) => [r.jobId, r.requeues, r.notBefore.getTime() - now])).toEqual([[id, 1, 10_000]]);
    expect(await job(id!)).toMatchObject({ state: 'PENDING', allocations: 0, admitted_at: null, requeues: 1 });

    // A cycle inside the backoff (less the clock tolerance) leaves it waiting; one after it admits it again.
    now += 5_000;
    expect((await runner.runOnce(['test'])).result.admissions).toEqual([]);
    now += 5_001;
    expect((await runner.runOnce(['test'])).result.admissions.map((a) => a.jobId)).toEqual([id]);

    // Second timeout: twice the backoff.
    now += GANG_TIMEOUT_MS + 1;
    const second = await reconcile.run(fence);
    expect(second.requeued.map((r) => [r.requeues, r.notBefore.getTime() - now])).toEqual([[2, 20_000]]);
    const { rows } = await db.pool.query<{ kind: string }>(`SELECT kind FROM events WHERE job_id = $1 AND kind = 'job.requeued'`, [id]);
    expect(rows).toHaveLength(2);
  });

  it('refuses to requeue with a stale fencing token, and changes nothing', async () => {
    const lock = new PgCycleLock(db.pool);
    const store = new PgReconcileStore(db.pool, lock);
    const before = await db.pool.query('SELECT id, state, version FROM jobs ORDER BY id');
    await expect(
      store.requeueStuckAdmissions({ now: new Date(Date.now() + 10 * GANG_TIMEOUT_MS), admittedBefore: new Date(Date.now() + 9 * GANG_TIMEOUT_MS), backoffMs: () => 1, fencing: { leaseName: 'scheduler', token: 999n } }),
    ).rejects.toBeInstanceOf(FencingError);
    expect((await db.pool.query('SELECT id, state, version FROM jobs ORDER BY id')).rows).toEqual(before.rows);
  });
});
