// The scheduler's incremental snapshot (PgCycleStore + CycleSession + the snapshot_changes triggers):
// after every kind of change made between cycles by writers other than the cycle (submissions, executor
// steps, cancellation, node labels, a job's nodeSelector, node and tenancy edits), the snapshot a cycle decided on is the one a full read of
// the database gives (loadSnapshotWithVersions, the independent reader). And the run-time check — a
// `checked` read every QM_SNAPSHOT_FULL_RELOAD_MS — catches a change the log missed: it logs, counts,
// and uses the full read.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DEFAULT_OPTIONS, runCycle, type Snapshot } from '#core';
import { Database, acquireOrRenewLease, createTestDatabase, loadSnapshotWithVersions, moveJobs, type CycleRead, type TestDatabase } from '#db';
import { CycleRunner, PgCycleLock, PgCycleStore, SchedulerMetrics, type CycleReport, type FencingSource } from '#scheduling';
import { Registry } from 'prom-client';
import { executorStep, seedFleet, submitJobs } from './fleet.js';
import { silentLogger } from './support.js';

jest.setTimeout(120_000);

/** The parts of a snapshot as sets (a full read orders by the database's timestamps, to the microsecond). */
function normalised(s: Snapshot): Record<string, unknown> {
  const byKey = <T>(list: readonly T[], key: (x: T) => string): T[] => [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return {
    flavors: byKey(s.flavors, (f) => f.name),
    nodes: byKey(s.nodes, (n) => n.name),
    cohorts: byKey(s.cohorts, (c) => c.name),
    teams: byKey(s.teams, (t) => t.name),
    quotas: byKey(s.quotas, (q) => `${q.team}/${q.flavor}`),
    running: byKey(s.running, (j) => j.id),
    pending: byKey(s.pending, (j) => j.id),
    budgetBlocks: s.budgetBlocks ?? [],
  };
}

describe('incremental snapshot', () => {
  let testDb: TestDatabase;
  let db: Database;
  let fencing: FencingSource;

  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'incremental' });
    db = new Database(testDb.url, { poolSize: 4 });
    await seedFleet(db.pool, { nodes: 4, perNode: 8 });
    const lease = await acquireOrRenewLease(db, 'scheduler', 'incr', 3_600_000);
    fencing = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder: 'incr' }) };
  });

  afterAll(async () => {
    await db.close();
    await testDb.drop();
  });

  it('equals a full read after changes by every kind of writer between cycles', async () => {
    const reads: CycleRead[] = [];
    const store = new PgCycleStore(db, new PgCycleLock(db.pool), DEFAULT_OPTIONS, { fullReloadMs: 3_600_000, onRead: (r) => reads.push(r) });
    const runner = new CycleRunner(store, fencing, runCycle, silentLogger);
    /** A cycle, and a full read of the same state just before it: what the cycle decided on must equal it. */
    const cycle = async (): Promise<CycleReport> => {
      const full = await loadSnapshotWithVersions(db, Date.now(), DEFAULT_OPTIONS);
      const report = await runner.runOnce();
      expect(normalised(report.snapshot)).toEqual(normalised(full.snapshot));
      expect(new Map(reads.at(-1)!.versions)).toEqual(full.versions);
      return report;
    };

    const first = await submitJobs(db.pool, 10, { tag: 'a' });
    const c1 = await cycle();
    expect(c1.result.admissions).toHaveLength(10);

    // Submissions, executor steps, a cancellation, a priority edit, node and tenancy edits.
    const more = await submitJobs(db.pool, 30, { tag: 'b', perReplica: 2 });
    await executorStep(db.pool, 60_000);
    await moveJobs(db.pool, [{ jobId: more[0]!, to: 'CANCELLED', reason: 'user' }]);
    await db.pool.query(`UPDATE jobs SET priority = 7 WHERE id = $1`, [more[1]]);
    await db.pool.query(`INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone) VALUES ('node-new', 'h100-80gb', 8, 96000, 1048576, 'z9')`);
    await db.pool.query(`UPDATE nodes SET schedulable = false WHERE name = 'node-00002'`);
    await db.pool.query(`UPDATE quotas SET nominal = 20 WHERE team = 'vision'`);
    await db.pool.query(`INSERT INTO cohorts (name) VALUES ('research')`);
    await db.pool.query(`INSERT INTO teams (name, cohort) VALUES ('nlp', 'research')`);
    await db.pool.query(`INSERT INTO quotas (team, flavor, nominal) VALUES ('nlp', 'h100-80gb', 8)`);
    await submitJobs(db.pool, 3, { tag: 'nlp', team: 'nlp' });
    await db.pool.query(`UPDATE nodes SET labels = '{"pool": "a"}' WHERE name = 'node-00003'`);
    await db.pool.query(`UPDATE jobs SET template = template || '{"nodeSelector": {"pool": "a"}}' WHERE id = $1`, [more[2]]);
    const c2 = await cycle();
    expect(c2.snapshot.pending.find((j) => j.id === more[2])?.topology.nodeSelector).toEqual({ pool: 'a' });
    expect(c2.snapshot.running.filter((j) => first.includes(j.id))).toHaveLength(10);
    expect(c2.snapshot.pending.find((j) => j.id === more[1])?.priority).toBe(7);
    expect(c2.snapshot.nodes.map((n) => n.name)).toContain('node-new');

    // Jobs end (allocations released), a node goes, a flavor and a team change.
    await executorStep(db.pool, 0);
    await db.pool.query(`UPDATE jobs SET started_at = now() - interval '1 hour' WHERE state = 'RUNNING'`);
    await executorStep(db.pool, 0);
    await db.pool.query(`DELETE FROM nodes WHERE name = 'node-new'`);
    await db.pool.query(`UPDATE flavors SET relative_speed = 2`);
    await db.pool.query(`UPDATE teams SET fair_share_weight = 3 WHERE name = 'nlp'`);
    const c3 = await cycle();
    expect(c3.snapshot.nodes.map((n) => n.name)).not.toContain('node-new');

    // Nothing changed: an incremental read of nothing.
    await cycle();

    expect(reads.map((r) => r.kind)).toEqual(['full', 'incremental', 'incremental', 'incremental']);
    expect(reads[1]!.changed).toBeGreaterThan(0);
  });

  it('a checked read catches a change the log missed, counts it, and decides on the full read', async () => {
    const registry = new Registry();
    const metrics = new SchedulerMetrics(registry);
    const reads: CycleRead[] = [];
    const errors: unknown[] = [];
    const logger = Object.assign(Object.create(silentLogger) as typeof silentLogger, { error: (o: unknown) => errors.push(o) });
    const store = new PgCycleStore(db, new PgCycleLock(db.pool), DEFAULT_OPTIONS, {
      fullReloadMs: 1,
      logger,
      onRead: (r) => {
        reads.push(r);
        metrics.onSnapshotRead(r);
      },
    });
    const runner = new CycleRunner(store, fencing, runCycle, silentLogger);
    await runner.runOnce(); // full
    const [job] = await submitJobs(db.pool, 1, { tag: 'hidden', perReplica: 64 }); // waits: no node has 64
    await new Promise((resolve) => setTimeout(resolve, 5));
    await runner.runOnce(); // checked: the new job is in the log, nothing differs
    expect(reads.at(-1)!.kind).toBe('checked');
    expect(reads.at(-1)!.mismatches).toEqual([]);

    // A write the change log does not see (its trigger off): the incremental state goes stale.
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE jobs DISABLE TRIGGER jobs_snapshot_update');
      await client.query(`UPDATE jobs SET priority = 42 WHERE id = $1`, [job]);
      await client.query('ALTER TABLE jobs ENABLE TRIGGER jobs_snapshot_update');
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await runner.runOnce();
    const read = reads.at(-1)!;
    expect(read.kind).toBe('checked');
    expect(read.mismatches).toHaveLength(1); // the pending job, as kept vs as read
    expect(read.mismatches!.join('\n')).toContain(job);
    expect(report.snapshot.pending.find((j) => j.id === job)?.priority).toBe(42); // the full read decided
    expect(errors).toHaveLength(1);
    expect((await registry.getSingleMetricAsString('qm_scheduler_snapshot_mismatches_total'))).toMatch(/qm_scheduler_snapshot_mismatches_total 1$/m);
  });
});
