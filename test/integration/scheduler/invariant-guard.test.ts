// The runtime guard on a real Postgres: a cycle whose decisions break a rule (a faulty core that packs
// every gang onto one node) is aborted before its commit — nothing written, the violation logged with
// the cycle and counted in qm_scheduler_invariant_violations_total — and the next, correct cycle commits.
// A large cycle runs the guard while Postgres writes (CycleSession.commitChecked): a violation found then
// rolls the written decisions back just the same.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runCycle, type CycleResult, type Snapshot } from '#core';
import { Database, acquireOrRenewLease, createTestDatabase, type TestDatabase } from '#db';
import { CycleRunner, InvariantViolationError, OVERLAPPED_CHECK_MIN_DECISIONS, PgCycleLock, PgCycleStore, SchedulerMetrics, type FencingSource } from '#scheduling';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Writable } from 'node:stream';
import { seedFleet, submitJobs } from './fleet.js';

// The second case creates, seeds and schedules ~2,000 jobs on a shared, busy server.
jest.setTimeout(120_000);

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_guard' });
  db = new Database(testDb.url, { poolSize: 4 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

/** A faulty core: the real decisions, with every replica moved onto the first node (overcommitting it). */
function packOntoOneNode(snapshot: Snapshot): CycleResult {
  const result = runCycle(snapshot);
  const node = snapshot.nodes[0]!.name;
  return { ...result, admissions: result.admissions.map((a) => ({ ...a, placement: a.placement.map((p) => ({ ...p, node })) })) };
}

async function counts(database: Database = db): Promise<Record<string, number>> {
  const { rows } = await database.pool.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM jobs WHERE state <> 'PENDING') AS moved, (SELECT count(*)::int FROM allocations) AS allocations,
            (SELECT count(*)::int FROM outbox) AS outbox, (SELECT count(*)::int FROM scheduler_cycles) AS cycles,
            (SELECT count(*)::int FROM job_transitions WHERE "from" IS NOT NULL) AS transitions`,
  );
  return rows[0]!;
}

describe('the invariant guard before commit', () => {
  it('aborts a cycle that breaks a rule (nothing written, logged with the cycle, counted), and commits the next correct one', async () => {
    await seedFleet(db.pool, { nodes: 3, perNode: 8 });
    await submitJobs(db.pool, 3, { tag: 'guard', replicas: 1, perReplica: 8 });
    const holder = 'guard-leader';
    const lease = await acquireOrRenewLease(db, 'scheduler', holder, 3_600_000);
    const fencing: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder }) };
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } }));
    const registry = new Registry();
    const metrics = new SchedulerMetrics(registry);
    const store = new PgCycleStore(db, new PgCycleLock(db.pool));

    const faulty = new CycleRunner(store, fencing, packOntoOneNode, logger, [metrics]);
    const error = await faulty.runOnce().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvariantViolationError);
    const violation = error as InvariantViolationError;
    expect(violation.violations.map((v) => v.code)).toContain('NODE_OVERCOMMITTED');
    expect(await counts()).toEqual({ moved: 0, allocations: 0, outbox: 0, cycles: 0, transitions: 0 });
    const logged = lines.find((l) => l['msg'] === 'decisions break the scheduler rules; cycle aborted, nothing committed');
    expect(logged).toMatchObject({ level: 50, cycle: violation.cycle, phase: '3-check' });
    const counted = (await registry.getSingleMetric('qm_scheduler_invariant_violations_total')!.get()).values;
    expect(counted).toContainEqual(expect.objectContaining({ labels: { rule: '1', code: 'NODE_OVERCOMMITTED' } }));
    const failures = (await registry.getSingleMetric('qm_scheduler_cycle_failures_total')!.get()).values;
    expect(failures).toEqual([expect.objectContaining({ labels: { phase: 'check' }, value: 1 })]);

    const correct = new CycleRunner(store, fencing, runCycle, logger, [metrics]);
    const report = await correct.runOnce();
    expect(report.committed).toBe(true);
    expect(report.result.admissions).toHaveLength(3);
    expect(report.phasesMs.check).toBeGreaterThanOrEqual(0);
    expect(await counts()).toMatchObject({ moved: 3, allocations: 3, cycles: 1 });
  });

  it('in a large cycle, runs while Postgres writes and rolls the written decisions back on a violation; commits the next correct cycle', async () => {
    const own = await createTestDatabase({ label: 'sched_guard_overlap' });
    const big = new Database(own.url, { poolSize: 4 });
    try {
      const jobs = OVERLAPPED_CHECK_MIN_DECISIONS + 50;
      await seedFleet(big.pool, { nodes: Math.ceil(jobs / 8), perNode: 8 });
      await submitJobs(big.pool, jobs, { tag: 'overlap' });
      const holder = 'overlap-leader';
      const lease = await acquireOrRenewLease(big, 'scheduler', holder, 3_600_000);
      const fencing: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder }) };
      const registry = new Registry();
      const metrics = new SchedulerMetrics(registry);
      let overlapped = 0;
      const store = new (class extends PgCycleStore {
        override commitCycleChecked(...args: Parameters<PgCycleStore['commitCycleChecked']>): ReturnType<PgCycleStore['commitCycleChecked']> {
          overlapped++;
          return super.commitCycleChecked(...args);
        }
      })(big, new PgCycleLock(big.pool));

      const faulty = new CycleRunner(store, fencing, packOntoOneNode, pino({ level: 'silent' }), [metrics]);
      const error = await faulty.runOnce().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvariantViolationError);
      expect(overlapped).toBe(1);
      expect(await counts(big)).toEqual({ moved: 0, allocations: 0, outbox: 0, cycles: 0, transitions: 0 });
      const failures = (await registry.getSingleMetric('qm_scheduler_cycle_failures_total')!.get()).values;
      expect(failures).toEqual([expect.objectContaining({ labels: { phase: 'check' }, value: 1 })]);

      const correct = new CycleRunner(store, fencing, runCycle, pino({ level: 'silent' }), [metrics]);
      const report = await correct.runOnce();
      expect(overlapped).toBe(2);
      expect(report.committed).toBe(true);
      expect(report.result.admissions).toHaveLength(jobs);
      expect(report.phasesMs.check).toBeGreaterThan(0);
      expect(await counts(big)).toMatchObject({ moved: jobs, allocations: jobs, cycles: 1 });
    } finally {
      await big.close();
      await own.drop();
    }
  });
});
