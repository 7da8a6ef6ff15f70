// +200 ms on the Postgres link (each way, FaultProxy.latency): a cycle over 1,000 pending jobs still
// commits, in the same small number of round trips as on a fast link — two messages per cycle (lock +
// read, commit + unlock), for the first cycle's full read and the next one's incremental read alike.
// What a round trip costs is for `bench:e2e latency` to measure (no timing is asserted here).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runCycle } from '#core';
import { Database, acquireOrRenewLease, createTestDatabase, type CycleRead, type TestDatabase } from '#db';
import { CycleRunner, PgCycleLock, PgCycleStore, type FencingSource } from '#scheduling';
import { seedFleet, submitJobs } from '../integration/scheduler/fleet.js';
import { silentLogger } from '../integration/scheduler/support.js';
import { FaultProxy } from '../support/fault-proxy.js';

jest.setTimeout(180_000);

describe('chaos: +200 ms of Postgres latency', () => {
  let testDb: TestDatabase;
  let proxy: FaultProxy;
  let db: Database;
  let direct: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'pg_latency' });
    proxy = await FaultProxy.start({ host: '127.0.0.1', port: 5432 });
    db = new Database(proxy.via(testDb.url), { poolSize: 2 });
    direct = new Database(testDb.url, { poolSize: 2 });
  });

  afterAll(async () => {
    await db?.close();
    await direct?.close();
    await proxy?.close();
    await testDb?.drop();
  });

  it('commits a cycle of 1,000 pending jobs in two round trips, full read and incremental read alike', async () => {
    await seedFleet(direct.pool, { nodes: 250, perNode: 8 });
    await submitJobs(direct.pool, 1000, { tag: 'slow' });
    const lease = await acquireOrRenewLease(direct, 'scheduler', 'latency', 3_600_000);
    const fencing: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: lease.fencingToken, holder: 'latency' }) };

    // Every message the cycle sends through the proxy: one per client.query (one round trip each).
    let messages = 0;
    const seen = new WeakSet<object>();
    db.pool.on('acquire', (client) => {
      if (seen.has(client)) return;
      seen.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        messages++;
        return query(...args);
      };
    });
    await db.pool.query('SELECT 1'); // a connection open before the latency: the cycle's round trips are counted, not the start-up's
    messages = 0;

    const reads: CycleRead[] = [];
    const runner = new CycleRunner(new PgCycleStore(db, new PgCycleLock(db.pool), undefined, { onRead: (r) => reads.push(r) }), fencing, runCycle, silentLogger);
    proxy.latency(200);

    const first = await runner.runOnce();
    expect(first.committed).toBe(true);
    expect(first.result.admissions).toHaveLength(1000);
    expect(messages).toBe(2);

    await submitJobs(direct.pool, 1000, { tag: 'slower' });
    messages = 0;
    const second = await runner.runOnce();
    expect(second.result.admissions).toHaveLength(1000);
    expect(messages).toBe(2);
    expect(reads.map((r) => r.kind)).toEqual(['full', 'incremental']);
    // The 1,000 admitted by the first cycle and the 1,000 new; and the 250 seeded nodes when some other
    // transaction on the server (another database's: transaction ids are cluster-wide) was open at the first
    // read, which leaves the seed's changes at or above that read's xmin — a superset is what the log promises.
    expect(reads[1]!.changed).toBeGreaterThanOrEqual(2000);
    expect(reads[1]!.changed).toBeLessThanOrEqual(2250);

    proxy.heal();
    const { rows } = await direct.pool.query<{ state: string; n: number }>(`SELECT state::text, count(*)::int AS n FROM jobs GROUP BY state`);
    expect(rows).toEqual([{ state: 'ADMITTED', n: 2000 }]);
  });
});
