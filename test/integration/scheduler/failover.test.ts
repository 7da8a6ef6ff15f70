import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { childEnv } from './env.js';
import { findViolations, jobStates, seedFleet, submitJobs } from './fleet.js';
import { getJson, spawnRole, type RoleProcess } from './processes.js';
import { flushPrefix, uniquePrefix, waitFor } from './support.js';

jest.setTimeout(180_000);

let testDb: TestDatabase;
let db: Database;
const running: RoleProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_failover' });
  db = new Database(testDb.url, { poolSize: 4 });
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.kill('SIGKILL')));
  await db.close();
  await testDb.drop();
});

interface Readiness {
  scheduler: { leader: boolean; holder: string; fencingToken: string | null };
}

async function readiness(url: string): Promise<Readiness> {
  return (await getJson(`${url}/readyz`)) as unknown as Readiness;
}

describe('two scheduler processes started together', () => {
  it('elects exactly one committer; when it is killed, the other takes over and admits the rest', async () => {
    const prefix = uniquePrefix('failover');
    const env = childEnv(testDb.url, prefix);
    await seedFleet(db.pool, { nodes: 20, perNode: 8 });
    const worker = spawnRole('worker', env);
    const a = spawnRole('scheduler', env);
    const b = spawnRole('scheduler', env);
    running.push(worker, a, b);
    const [urlA, urlB] = await Promise.all([a.ready, b.ready, worker.ready]);

    const leaders = await waitFor('one leader', async () => {
      const [ra, rb] = await Promise.all([readiness(urlA), readiness(urlB)]);
      const count = Number(ra.scheduler.leader) + Number(rb.scheduler.leader);
      return count === 1 ? { ra, rb } : null;
    });
    const [leader, standby, standbyUrl] = leaders.ra.scheduler.leader ? [a, b, urlB] : [b, a, urlA];
    const leaderHolder = (leaders.ra.scheduler.leader ? leaders.ra : leaders.rb).scheduler.holder;
    const firstToken = BigInt((leaders.ra.scheduler.leader ? leaders.ra : leaders.rb).scheduler.fencingToken!);

    const first = await submitJobs(db.pool, 40, { tag: 'before', perReplica: 1 });
    await waitFor('first jobs admitted', async () => (await jobStates(db.pool))['ADMITTED'] === first.length);
    const committers = await db.pool.query<{ leader: string }>('SELECT DISTINCT leader FROM scheduler_cycles');
    expect(committers.rows.map((r) => r.leader)).toEqual([leaderHolder]);

    await leader.kill('SIGKILL');
    const second = await submitJobs(db.pool, 40, { tag: 'after', perReplica: 2 });
    const took = await waitFor('the standby leads', async () => {
      const r = await readiness(standbyUrl);
      return r.scheduler.leader ? r : null;
    });
    expect(BigInt(took.scheduler.fencingToken!)).toBeGreaterThan(firstToken);
    await waitFor('every job admitted', async () => (await jobStates(db.pool))['ADMITTED'] === first.length + second.length);

    const after = await db.pool.query<{ leader: string; fencing_token: string }>(
      `SELECT DISTINCT leader, fencing_token::text FROM scheduler_cycles ORDER BY 2`,
    );
    expect(after.rows.map((r) => r.leader)).toEqual([leaderHolder, took.scheduler.holder]);
    expect(await findViolations(db.pool)).toEqual({ overAllocatedNodes: [], admittedTwice: [], allocationsOfNonHolding: 0, holdingWithoutAllocation: 0 });
    await waitFor('every outbox entry done', async () => {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE status <> 'done'`);
      return rows[0]!.n === 0;
    });
    await standby.kill('SIGTERM');
    await worker.kill('SIGTERM');
    await flushPrefix(prefix);
  });
});
