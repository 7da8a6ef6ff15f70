// A cycle (lock, snapshot, decide, guard, commit) makes the same number of Postgres round trips whatever
// the number of jobs and nodes: every read and write is set-based, and the statements of the read (lock +
// snapshot) and of the commit (+ unlock) each go in one message (CycleSession). Counted on the pool's
// connections: two per cycle, the first (full read) and the next (incremental) alike. (From
// OVERLAPPED_CHECK_MIN_DECISIONS decisions a cycle makes three: its COMMIT waits for the guard, run during the writes.)
import { describe, expect, it, jest } from '@jest/globals';
import { runCycle } from '#core';
import { Database, acquireOrRenewLease, createTestDatabase } from '#db';
import { CycleRunner, PgCycleLock, PgCycleStore, type FencingSource } from '#scheduling';
import { seedFleet, submitJobs } from './fleet.js';
import { silentLogger } from './support.js';

/** Runs one cycle over `jobs` pending jobs on `nodes` nodes and returns the queries it sent, and what it admitted. */
async function cycleRoundTrips(nodes: number, jobs: number): Promise<{ queries: number; admitted: number; next: { queries: number; admitted: number } }> {
  const testDb = await createTestDatabase({ label: `rt_${nodes}` });
  const db = new Database(testDb.url, { poolSize: 3 });
  try {
    await seedFleet(db.pool, { nodes, perNode: 8 });
    await submitJobs(db.pool, jobs, { tag: 'rt' });
    const lease = await acquireOrRenewLease(db, 'scheduler', 'rt', 3_600_000);
    const fencing: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder: 'rt' }) };
    let queries = 0;
    let counting = false;
    const counted = new WeakSet<object>();
    db.pool.on('acquire', (client) => {
      if (counted.has(client)) return;
      counted.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        if (counting) queries++;
        return query(...args);
      };
    });
    const runner = new CycleRunner(new PgCycleStore(db, new PgCycleLock(db.pool)), fencing, runCycle, silentLogger);
    counting = true;
    const report = await runner.runOnce();
    counting = false;
    const first = { queries, admitted: report.result.admissions.length };
    // The next cycle reads incrementally: the jobs just admitted and as many new ones.
    await submitJobs(db.pool, jobs, { tag: 'rt2' });
    queries = 0;
    counting = true;
    const next = await runner.runOnce();
    counting = false;
    return { ...first, next: { queries, admitted: next.result.admissions.length } };
  } finally {
    await db.close();
    await testDb.drop();
  }
}

// Two databases created, seeded and migrated on a shared, busy server.
jest.setTimeout(120_000);

describe('Postgres round trips per cycle', () => {
  it('are the same for 8 jobs on 4 nodes and 800 jobs on 200 nodes', async () => {
    const small = await cycleRoundTrips(4, 8);
    const large = await cycleRoundTrips(200, 800);
    expect(small.admitted).toBe(8);
    expect(large.admitted).toBe(800);
    expect([small.next.admitted, large.next.admitted]).toEqual([8, 800]);
    expect([small.queries, small.next.queries, large.queries, large.next.queries]).toEqual([2, 2, 2, 2]);
  });
});
