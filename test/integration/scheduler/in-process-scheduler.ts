// A scheduler process in the test's own process: the production composition (createSchedulerProcess over
// the Postgres stores), so that a test can hook its stores and watch its elector.
import { afterAll, beforeAll } from '@jest/globals';
import { runBudgetedCycle } from '#core';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import {
  PgCycleLock,
  PgCycleStore,
  PgLeaseStore,
  PgOutboxStore,
  PgReconcileStore,
  SchedulerMetrics,
  createSchedulerProcess,
  schedulerSettingsFromEnv,
  type CycleStore,
  type SchedulerProcess,
} from '#scheduling';
import { seedFleet } from './fleet.js';
import { REDIS_URL, flushPrefix, silentLogger } from './support.js';

export interface InProcessSchedulerOptions {
  holder: string;
  redisPrefix: string;
  /** Its lease renewals go over `lease`, its cycles (lock, read, commit) and reconcile over `cycle`. */
  urls: { lease: string; cycle: string };
  timing: { ttlMs: number; renewMs: number; reconcileEveryMs?: number };
  /** Wraps the Postgres cycle store (a hook on its commits). */
  cycles?: (store: CycleStore) => CycleStore;
}

/** Built, not started; `close()` stops it (giving the lease back) and closes its pools. */
export function inProcessScheduler(options: InProcessSchedulerOptions): { process: SchedulerProcess; close(): Promise<void> } {
  const leaseDb = new Database(options.urls.lease, { poolSize: 2 });
  const cycleDb = new Database(options.urls.cycle, { poolSize: 3 });
  const settings = schedulerSettingsFromEnv({
    QM_REDIS_PREFIX: options.redisPrefix,
    QM_LEASE_TTL_MS: String(options.timing.ttlMs),
    QM_LEASE_RENEW_MS: String(options.timing.renewMs),
    QM_CYCLE_DEBOUNCE_MS: '5',
    QM_CYCLE_TICK_MS: '200',
    QM_RECONCILE_EVERY_MS: String(options.timing.reconcileEveryMs ?? 500),
  });
  const lock = new PgCycleLock(cycleDb.pool);
  const store = new PgCycleStore(cycleDb, lock);
  const process = createSchedulerProcess({
    stores: {
      cycles: options.cycles ? options.cycles(store) : store,
      leases: new PgLeaseStore(leaseDb),
      outbox: new PgOutboxStore(cycleDb.pool),
      reconcile: new PgReconcileStore(cycleDb.pool, lock),
    },
    settings,
    redisUrl: REDIS_URL,
    logger: silentLogger,
    metrics: new SchedulerMetrics(),
    schedule: runBudgetedCycle,
    holder: options.holder,
  });
  let closed = false;
  return {
    process,
    close: async () => {
      if (closed) return;
      closed = true;
      await process.stop();
      await leaseDb.close();
      await cycleDb.close();
    },
  };
}

/** A test database seeded with a small fleet, a direct pool on it, and what to close after the file's tests. */
export interface SchedulerTestWorld {
  testDb: TestDatabase;
  direct: Database;
  /** Closed in reverse order after the file's tests (before the pool, the Redis prefix and the database go). */
  closers: (() => Promise<void>)[];
}

/**
 * Registers the file's beforeAll/afterAll for a SchedulerTestWorld (4 nodes × 8 accelerators); its fields are
 * set once beforeAll has run.
 */
export function schedulerTestWorld(label: string, redisPrefix: string): SchedulerTestWorld {
  const world = { closers: [] } as unknown as SchedulerTestWorld;
  beforeAll(async () => {
    world.testDb = await createTestDatabase({ label });
    world.direct = new Database(world.testDb.url, { poolSize: 4 });
    await seedFleet(world.direct.pool, { nodes: 4, perNode: 8 });
  });
  afterAll(async () => {
    for (const close of world.closers.reverse()) await close().catch(() => undefined);
    await world.direct?.close();
    await flushPrefix(redisPrefix);
    await world.testDb?.drop();
  });
  return world;
}
