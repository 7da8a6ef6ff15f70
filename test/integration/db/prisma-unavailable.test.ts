import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { isDatabaseUnavailable } from '#common';
import {
  CohortRepository,
  Database,
  FlavorRepository,
  NodeRepository,
  QuotaRepository,
  TeamRepository,
  TokenRepository,
  UsageRepository,
  JobRepository,
  QueueRepository,
  AuditRepository,
  BudgetRepository,
  FleetRepository,
  UsageLedgerRepository,
  createTestDatabase,
  type TestDatabase,
} from '#db';
import { FaultProxy } from '../../support/fault-proxy.js';

jest.setTimeout(60_000);

/**
 * The CRUD repositories go through the Prisma client (driver adapter over the shared pg pool). When
 * Postgres cannot be reached, what they throw must be recognised as "database unavailable" (the API's
 * 503 DATABASE_UNAVAILABLE, never a 500): plain queries, createManyAndReturn, groupBy and interactive
 * transactions alike, whether connections are refused or reset mid-session.
 */
function calls(db: Database): [string, () => Promise<unknown>][] {
  const teams = new TeamRepository(db);
  const quotas = new QuotaRepository(db);
  return [
    ['teams.list', () => teams.list()],
    ['teams.upsert', () => teams.upsert('vision', { cohort: null, fairShareWeight: 1, withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, 'test')],
    ['teams.delete (interactive transaction)', () => teams.delete('vision', 'test')],
    ['quotas.put (interactive transaction)', () => quotas.put({ team: 'vision', flavor: 'h100', nominal: 8, borrowingLimit: null, lendingLimit: null, cpuMillisLimit: null, memoryMiBLimit: null }, 'test')],
    ['cohorts.get', () => new CohortRepository(db).get('research')],
    ['flavors.upsert', () => new FlavorRepository(db).upsert('h100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 1, costPerHour: 1 }, 'test')],
    ['flavors.deleteIfUnused', () => new FlavorRepository(db).deleteIfUnused('h100', 'test')],
    ['nodes.list', () => new NodeRepository(db).list()],
    ['tokens.findActiveByHash', () => new TokenRepository(db).findActiveByHash('0'.repeat(64))],
    ['usage.load (batch transaction, groupBy)', () => new UsageRepository(db).load()],
    ['jobs.get (relations)', () => new JobRepository(db).get('00000000-0000-4000-8000-000000000001')],
    ['jobs.list', () => new JobRepository(db).list({ limit: 10, before: { submittedAt: new Date(), id: '00000000-0000-4000-8000-000000000001' } })],
    ['queue.list (findMany + count)', () => new QueueRepository(db).list({ states: ['PENDING'], limit: 10, offset: 0 })],
    ['audit.list', () => new AuditRepository(db).list({ limit: 10, before: '42' })],
    ['budgets.put (interactive transaction)', () => new BudgetRepository(db).put({ team: 'vision', period: 'month', limit: 10, unit: 'currency', onExhausted: 'warn' }, 'test')],
    ['budgets.alerts', () => new BudgetRepository(db).alerts('vision')],
    ['ledger.segments', () => new UsageLedgerRepository(db).segments()],
    ['fleet.activeJobs (groupBy)', () => new FleetRepository(db).activeJobs(['vision'])],
  ];
}

async function failures(db: Database): Promise<{ call: string; unavailable: boolean; error: string }[]> {
  const out: { call: string; unavailable: boolean; error: string }[] = [];
  for (const [call, run] of calls(db)) {
    try {
      await run();
      out.push({ call, unavailable: false, error: 'did not fail' });
    } catch (error) {
      out.push({ call, unavailable: isDatabaseUnavailable(error), error: error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 200)}` : String(error) });
    }
  }
  return out;
}

describe('Prisma-backed repositories while Postgres is unreachable', () => {
  let testDb: TestDatabase;
  let proxy: FaultProxy;
  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'prisma_unavailable' });
    proxy = await FaultProxy.start({ host: '127.0.0.1', port: 5432 });
  });
  afterAll(async () => {
    await proxy.close();
    await testDb.drop();
  });

  it('connections refused: every call fails with an error recognised as database unavailable', async () => {
    const db = new Database(proxy.via(testDb.url), { poolSize: 2 });
    try {
      // Working first (the same calls succeed or refuse for a reason of their own through a healthy link).
      expect(await new TeamRepository(db).list()).toEqual([]);
      proxy.reset();
      const result = await failures(db);
      expect(result.filter((r) => !r.unavailable)).toEqual([]);
    } finally {
      proxy.heal();
      await db.close();
    }
  });

  it('link black-holed: every call, run as concurrent requests would, fails as unavailable — a transaction that could not start in time included', async () => {
    // Connecting takes longer than Prisma's default wait for a transaction to start (2 s): a transaction
    // waiting for a connection gives up first (P2028), which is the same outage seen a moment sooner.
    const db = new Database(proxy.via(testDb.url), { poolSize: 10, connectTimeoutMs: 2500 });
    try {
      expect(await new TeamRepository(db).list()).toEqual([]);
      proxy.blackhole();
      db.dropConnections();
      const result = await Promise.all(
        calls(db).map(async ([call, run]) => {
          try {
            await run();
            return { call, unavailable: false, error: 'did not fail' };
          } catch (error) {
            return { call, unavailable: isDatabaseUnavailable(error), error: error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 200)}` : String(error) };
          }
        }),
      );
      expect(result.filter((r) => !r.unavailable)).toEqual([]);
    } finally {
      proxy.heal();
      await db.close();
    }
  });

  it('connections reset while pooled: the same, then the repositories work again once Postgres is back', async () => {
    const db = new Database(proxy.via(testDb.url), { poolSize: 2 });
    try {
      await new TeamRepository(db).list(); // a pooled, idle connection
      proxy.reset(); // resets it, and refuses new ones
      const result = await failures(db);
      expect(result.filter((r) => !r.unavailable)).toEqual([]);
      proxy.heal();
      const { created } = await new FlavorRepository(db).upsert('h100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 1, costPerHour: 1 }, 'test');
      expect(created).toBe(true);
      expect((await new TeamRepository(db).upsert('vision', { cohort: null, fairShareWeight: 1, withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, 'test')).created).toBe(true);
      const change = await new QuotaRepository(db).put({ team: 'vision', flavor: 'h100', nominal: 8, borrowingLimit: null, lendingLimit: null, cpuMillisLimit: null, memoryMiBLimit: null }, 'test');
      expect(change.before).toBeNull();
    } finally {
      proxy.heal();
      await db.close();
    }
  });
});
