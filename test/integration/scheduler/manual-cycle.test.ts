import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCycle } from '#core';
import { Database, acquireOrRenewLease, createTestDatabase, readLease, type TestDatabase } from '#db';
import { ManualCycle, schedulerSettingsFromEnv } from '#scheduling';
import { findViolations, jobStates, seedFleet, submitJobs } from './fleet.js';
import { REDIS_URL, flushPrefix, silentLogger, uniquePrefix } from './support.js';

let testDb: TestDatabase;
let db: Database;
const prefix = uniquePrefix('manual');
const settings = schedulerSettingsFromEnv({ QM_REDIS_PREFIX: prefix });
const cycles: ManualCycle[] = [];

function manual(): ManualCycle {
  const cycle = new ManualCycle({ database: db, settings, redisUrl: REDIS_URL, logger: silentLogger, schedule: runCycle });
  cycles.push(cycle);
  return cycle;
}

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_manual' });
  db = new Database(testDb.url, { poolSize: 10 });
  await seedFleet(db.pool, { nodes: 4, perNode: 8 });
});

afterAll(async () => {
  await Promise.all(cycles.map((c) => c.close()));
  await flushPrefix(prefix);
  await db.close();
  await testDb.drop();
});

describe('ManualCycle (POST /v1/scheduler/cycles)', () => {
  it('without a scheduler process: takes the lease for the cycle, admits, and gives the lease back', async () => {
    const [id] = await submitJobs(db.pool, 1, { tag: 'solo', perReplica: 8 });
    const report = await manual().run();
    expect(report.result.admissions.map((a) => a.jobId)).toEqual([id]);
    const lease = await readLease(db, settings.leaseName);
    expect(lease?.held).toBe(false); // released: a scheduler starting now takes it at once
  });

  it('with a live leader: commits under the leader’s fencing token', async () => {
    const leader = await acquireOrRenewLease(db, settings.leaseName, 'the-leader', 60_000);
    await submitJobs(db.pool, 1, { tag: 'led', perReplica: 8 });
    const report = await manual().run();
    expect(report.result.admissions).toHaveLength(1);
    const { rows } = await db.pool.query<{ leader: string; fencing_token: string }>('SELECT leader, fencing_token::text FROM scheduler_cycles ORDER BY id DESC LIMIT 1');
    expect(rows[0]).toEqual({ leader: 'the-leader', fencing_token: leader.fencingToken.toString() });
  });

  it('never double-allocates when manual cycles race each other', async () => {
    // 16 accelerators are free; 10 jobs want 8 each. Five processes' worth of manual cycles at once.
    await submitJobs(db.pool, 10, { tag: 'race', perReplica: 8 });
    const reports = await Promise.all([manual().run(), manual().run(), manual().run(), manual().run(), manual().run()]);
    const admitted = reports.flatMap((r) => r.result.admissions.map((a) => a.jobId));
    expect(admitted).toHaveLength(2);
    expect(new Set(admitted).size).toBe(2);
    expect(await findViolations(db.pool)).toEqual({ overAllocatedNodes: [], admittedTwice: [], allocationsOfNonHolding: 0, holdingWithoutAllocation: 0 });
    expect(await jobStates(db.pool)).toEqual({ ADMITTED: 4, PENDING: 8 });
  });
});
