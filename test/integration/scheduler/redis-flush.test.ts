import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { childEnv, sleep } from './env.js';
import { executorStep, findViolations, jobStates, outboxStates, seedFleet, submitJobs } from './fleet.js';
import { spawnRole, type RoleProcess } from './processes.js';
import { flushPrefix, uniquePrefix, waitFor } from './support.js';

jest.setTimeout(240_000);

let testDb: TestDatabase;
let db: Database;
const running: RoleProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_flush' });
  db = new Database(testDb.url, { poolSize: 4 });
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.kill('SIGKILL')));
  await db.close();
  await testDb.drop();
});

describe('Redis flushed while jobs flow', () => {
  it('loses no work: every job runs to the end and every outbox entry ends done', async () => {
    const prefix = uniquePrefix('flush');
    const env = childEnv(testDb.url, prefix);
    await seedFleet(db.pool, { nodes: 10, perNode: 8 });
    const scheduler = spawnRole('scheduler', env);
    const workers = [spawnRole('worker', env), spawnRole('worker', env)];
    running.push(scheduler, ...workers);
    await Promise.all([scheduler.ready, ...workers.map((w) => w.ready)]);

    const target = 400;
    let submitted = 0;
    let flushes = 0;
    let deletedKeys = 0;
    for (let wave = 0; submitted < target; wave++) {
      submitted += (await submitJobs(db.pool, 20, { tag: `w${wave}`, perReplica: 1 + (wave % 4) })).length;
      await executorStep(db.pool, 100);
      if (wave % 4 === 3) {
        deletedKeys += await flushPrefix(prefix); // FLUSHDB of this run's keys, mid-flow
        flushes++;
      }
      await sleep(100);
    }
    await waitFor(
      `all ${target} jobs succeeded`,
      async () => {
        await executorStep(db.pool, 100);
        return (await jobStates(db.pool))['SUCCEEDED'] === target;
      },
      180_000,
      100,
    );
    await waitFor('every outbox entry done', async () => {
      const o = await outboxStates(db.pool);
      return Object.keys(o).length === 1 && o['done']! > 0;
    }, 60_000).catch(async (error: unknown) => {
      const { rows } = await db.pool.query(`SELECT id, kind, status, attempts, last_error, available_at, created_at FROM outbox WHERE status <> 'done' ORDER BY id LIMIT 10`);
      throw new Error(`${(error as Error).message}; not done: ${JSON.stringify(rows)}`);
    });
    expect(flushes).toBeGreaterThanOrEqual(4);
    expect(deletedKeys).toBeGreaterThan(0);
    expect(await jobStates(db.pool)).toEqual({ SUCCEEDED: target });
    expect(await findViolations(db.pool)).toEqual({ overAllocatedNodes: [], admittedTwice: [], allocationsOfNonHolding: 0, holdingWithoutAllocation: 0 });
    await Promise.all([scheduler, ...workers].map((p) => p.kill('SIGTERM')));
    await flushPrefix(prefix);
  });
});
