// A commit that takes longer than the lease's TTL (a big cycle under load, bench:e2e drain) must not cost
// its leader the lease: the commit's fencing lock (FOR KEY SHARE) does not hold up the leader's own
// renewals, while a standby's takeover would still wait for it (ADR 0004). Here a row lock held by another
// connection keeps the commit waiting for longer than the TTL.
import { describe, expect, it, jest } from '@jest/globals';
import type { SchedulerProcess } from '#scheduling';
import { inProcessScheduler, schedulerTestWorld } from './in-process-scheduler.js';
import { submitJobs } from './fleet.js';
import { uniquePrefix, waitFor } from './support.js';

jest.setTimeout(120_000);

const TTL_MS = 2000;
const RENEW_MS = 500;

describe('a commit held up for longer than the lease TTL', () => {
  const prefix = uniquePrefix('long_commit');
  const w = schedulerTestWorld('sched_long_commit', prefix);
  const { closers } = w;

  /** A scheduler process (the production composition, in this process), its depositions counted. */
  async function scheduler(holder: string): Promise<{ process: SchedulerProcess; deposed: string[] }> {
    const { process, close } = inProcessScheduler({
      holder,
      redisPrefix: prefix,
      urls: { lease: w.testDb.url, cycle: w.testDb.url },
      timing: { ttlMs: TTL_MS, renewMs: RENEW_MS, reconcileEveryMs: 300 },
    });
    const deposed: string[] = [];
    const onDeposed = process.service.onDeposed.bind(process.service);
    process.service.onDeposed = () => {
      deposed.push(holder);
      onDeposed();
    };
    closers.push(close);
    await process.start();
    return { process, deposed };
  }

  it('commits, and its leader keeps the lease (same token, never deposed) while a standby competes', async () => {
    const jobs = await submitJobs(w.direct.pool, 4, { tag: 'long', perReplica: 1 });
    // Another connection holds a row the commit's admissions update.
    const blocker = await w.direct.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [jobs[0]]);
    const blockerPid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      await blocker.query('COMMIT');
      blocker.release();
    };
    closers.push(release);

    const a = await scheduler('a');
    const leads = await waitFor('a to lead', () => Promise.resolve(a.process.elector.current));
    const b = await scheduler('b');
    const standbyLed: bigint[] = [];
    const watch = (): void => {
      const current = b.process.elector.current;
      if (current) standbyLed.push(current.fencingToken);
      void a.process.elector.current; // what /readyz asks: the leader's self-deposition check
    };

    // The commit waits on the blocker's row lock…
    await waitFor('the commit to wait on the row lock', async () => {
      watch();
      const { rows } = await w.direct.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
        [blockerPid],
      );
      return rows[0]!.n > 0;
    });
    const since = (await w.direct.pool.query<{ since: Date }>('SELECT clock_timestamp() AS since')).rows[0]!.since;
    // …until a has renewed its lease later than a TTL after it began waiting (or has lost it).
    await waitFor('a renewal a TTL into the wait, or a deposition', async () => {
      watch();
      if (a.deposed.length > 0 || standbyLed.length > 0) return true;
      const { rows } = await w.direct.pool.query<{ late: boolean }>(
        `SELECT renewed_at > $1::timestamptz + make_interval(secs => $2::float8 / 1000) AS late FROM scheduler_leases WHERE name = 'scheduler'`,
        [since, TTL_MS],
      );
      return rows[0]?.late === true;
    }, 20_000);
    const stillWaiting = await w.direct.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
      [blockerPid],
    );
    expect(stillWaiting.rows[0]!.n).toBeGreaterThan(0); // the commit was held up for longer than the TTL
    await release();

    await waitFor('the four jobs admitted', async () => {
      watch();
      const { rows } = await w.direct.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'ADMITTED'`, [jobs]);
      return rows[0]!.n === jobs.length;
    });
    watch();
    expect(a.deposed).toEqual([]);
    expect(standbyLed).toEqual([]);
    expect(a.process.elector.current?.fencingToken).toBe(leads.fencingToken);
    const { rows: committers } = await w.direct.pool.query<{ leader: string; fencing_token: string }>(
      'SELECT DISTINCT leader, fencing_token::text FROM scheduler_cycles',
    );
    expect(committers).toEqual([{ leader: 'a', fencing_token: leads.fencingToken.toString() }]);
    const { rows: lease } = await w.direct.pool.query<{ holder: string; fencing_token: string }>(
      `SELECT holder, fencing_token::text FROM scheduler_leases WHERE name = 'scheduler'`,
    );
    expect(lease).toEqual([{ holder: 'a', fencing_token: leads.fencingToken.toString() }]);
  });
});
