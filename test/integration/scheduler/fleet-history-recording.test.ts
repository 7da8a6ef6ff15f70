// The scheduler's leader records the fleet history by itself (production composition, in this process):
// reconcile (every 200 ms here) samples the minute once and rolls it into the hour and the day.
import { describe, expect, it, jest } from '@jest/globals';
import { inProcessScheduler, schedulerTestWorld } from './in-process-scheduler.js';
import { submitJobs } from './fleet.js';
import { uniquePrefix, waitFor } from './support.js';

jest.setTimeout(120_000);

describe('fleet history recorded by the leader', () => {
  const prefix = uniquePrefix('fleet_history');
  const w = schedulerTestWorld('sched_fleet_history', prefix);

  it('a minute sample per flavor and team with what the leader admitted, rolled into the hour and the day', async () => {
    await submitJobs(w.direct.pool, 2, { tag: 'hist', replicas: 1, perReplica: 8 });
    const { process, close } = inProcessScheduler({ holder: 'a', redisPrefix: prefix, urls: { lease: w.testDb.url, cycle: w.testDb.url }, timing: { ttlMs: 2000, renewMs: 500, reconcileEveryMs: 200 } });
    w.closers.push(close);
    await process.start();
    // The leader admits both jobs (16 of 32 h100s). Its first sample may have come before that (reconcile runs
    // on election): once they are admitted, the minute's rows are dropped, and the next reconcile samples again.
    await waitFor('both jobs admitted', async () => {
      const { rows } = await w.direct.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM jobs WHERE state = 'ADMITTED'`);
      return rows[0]!.n === '2' ? true : undefined;
    });
    await w.direct.pool.query(`DELETE FROM fleet_history`);
    const row = await waitFor('a minute sample with the admitted jobs', async () => {
      const { rows } = await w.direct.pool.query<{ at: Date; allocated: number; capacity: number }>(
        `SELECT at, allocated, capacity FROM fleet_history WHERE resolution = 'minute' AND team = '' AND allocated = 16 ORDER BY at LIMIT 1`,
      );
      return rows[0];
    });
    expect(row.capacity).toBe(32);
    // The hour and the day rows follow the minute (one row per minute, flavor and team: the table's key).
    await waitFor('the hour and day rows', async () => {
      const { rows } = await w.direct.pool.query<{ n: string }>(`SELECT count(DISTINCT resolution)::text AS n FROM fleet_history`);
      return rows[0]!.n === '3' ? true : undefined;
    });
    const { rows: teams } = await w.direct.pool.query<{ team: string }>(`SELECT DISTINCT team FROM fleet_history WHERE resolution = 'minute' ORDER BY team`);
    expect(teams.map((t) => t.team)).toEqual(['', 'vision']);
    const { rows: grains } = await w.direct.pool.query<{ resolution: string }>(`SELECT DISTINCT resolution::text FROM fleet_history ORDER BY 1`);
    expect(grains.map((g) => g.resolution)).toEqual(['day', 'hour', 'minute']);
  });
});
