import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCycle } from '#core';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { ManualCycle, SchedulerSettingsError, schedulerSettingsFromEnv } from '#scheduling';
import { seedFleet, submitJobs } from './fleet.js';
import { REDIS_URL, flushPrefix, silentLogger, uniquePrefix } from './support.js';

let testDb: TestDatabase;
let db: Database;
const prefix = uniquePrefix('ordering');
let cycle: ManualCycle | undefined;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_ordering' });
  db = new Database(testDb.url, { poolSize: 4 });
  await seedFleet(db.pool, { nodes: 1, perNode: 8 });
});

afterAll(async () => {
  await cycle?.close();
  await flushPrefix(prefix);
  await db.close();
  await testDb.drop();
});

describe('QM_QUEUE_ORDERING (the core’s options.ordering in the scheduler’s cycles)', () => {
  it('rejects an unknown order at start', () => {
    expect(() => schedulerSettingsFromEnv({ QM_QUEUE_ORDERING: 'lifo' })).toThrow(new SchedulerSettingsError('QM_QUEUE_ORDERING=lifo must be one of fifo, shortest-first'));
    expect(schedulerSettingsFromEnv({}).queueOrdering).toBe('fifo');
  });

  it('shortest-first: a cycle admits the later, shorter job on the only node, and the earlier, longer one waits', async () => {
    const [long] = await submitJobs(db.pool, 1, { tag: 'long', perReplica: 8 });
    const [short] = await submitJobs(db.pool, 1, { tag: 'short', perReplica: 8 });
    await db.pool.query(`UPDATE jobs SET expected_runtime_seconds = 36000, submitted_at = submitted_at - interval '10 minutes' WHERE id = $1`, [long]);
    const settings = schedulerSettingsFromEnv({ QM_REDIS_PREFIX: prefix, QM_QUEUE_ORDERING: 'shortest-first' });
    cycle = new ManualCycle({ database: db, settings, redisUrl: REDIS_URL, logger: silentLogger, schedule: runCycle });
    const report = await cycle.run();
    expect(report.result.admissions.map((a) => a.jobId)).toEqual([short]);
    expect(report.result.pending.map((p) => p.jobId)).toEqual([long]);
  });
});
