import { describe, expect, it, jest } from '@jest/globals';
import { teamUsage } from '#core';
import { UsageRepository } from '#db';
import { seededDatabase } from './seed.js';

jest.setTimeout(60_000);

/**
 * GET /v1/teams's live usage is read as one snapshot of the database: a change committed while the
 * reads run (a quota raised and a job submitted in one transaction) is seen by all of them or by none,
 * never by the quota read and not by the job reads.
 */
const database = seededDatabase('usage_snapshot', 8);

/** Waits until a query of this database waits for a lock (the usage read blocked behind `jobs`'s lock). */
async function untilBlocked(): Promise<void> {
  for (;;) {
    const { rows } = await database().pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('UsageRepository.load', () => {
  it('reads what teamUsage needs: allocations held per flavor, pending demand, quotas', async () => {
    const inputs = await new UsageRepository(database()).load();
    expect([...inputs.held].sort((a, b) => a.team.localeCompare(b.team) || a.accelerators - b.accelerators)).toEqual([
      { team: 'nlp', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 8000, memoryMiB: 65536 },
      { team: 'vision', flavor: 'h100-80gb', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
      { team: 'vision', flavor: 'h100-80gb', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
    ]);
    const nlp = teamUsage(inputs).find((u) => u.team === 'nlp' && u.flavor === 'h100-80gb');
    expect(nlp).toMatchObject({ nominal: 8, used: 8, pendingDemand: 32 });
  });

  it('sees a change committed during its reads in all of them or in none', async () => {
    const writer = await database().pool.connect();
    try {
      await writer.query('BEGIN');
      // The usage reads of jobs wait behind this lock; the tenancy reads do not.
      await writer.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
      await writer.query(`UPDATE quotas SET nominal = 100 WHERE team = 'nlp' AND flavor = 'h100-80gb'`);
      await writer.query(
        `INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, flavors, template, created_by)
         VALUES ('late', 'nlp', 'training', 1, 1, 8, ARRAY['h100-80gb'], '{}', 'test')`,
      );
      const reading = new UsageRepository(database()).load();
      await untilBlocked();
      await writer.query('COMMIT');
      const nlp = teamUsage(await reading).find((u) => u.team === 'nlp' && u.flavor === 'h100-80gb');
      // Before the change: nominal 8 and 32 pending (pend-3); after it: 100 and 40. Never 100 with 32 or 8 with 40.
      expect([
        [8, 32],
        [100, 40],
      ]).toContainEqual([nlp!.nominal, nlp!.pendingDemand]);
    } finally {
      await writer.query('ROLLBACK').catch(() => undefined);
      writer.release();
    }
  });
});
