// `npm start` (API, scheduler and worker in one process) loads the API once the first cycle has ended, or once
// its first election round left it a standby: the API's modules, loaded beside a large first cycle's commit,
// slowed the commit by a quarter (bench:e2e drain). QM_API_WAITS_FOR_FIRST_CYCLE_MS is huge here, so only
// those two events can let the API listen.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CYCLE_LOCK_KEY, Database, createTestDatabase, type TestDatabase } from '#db';
import { childEnv } from './env.js';
import { spawnRole, type RoleProcess } from './processes.js';
import { uniquePrefix, waitFor } from './support.js';

jest.setTimeout(120_000);

let testDb: TestDatabase;
let db: Database;
const running: RoleProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_start_order' });
  db = new Database(testDb.url, { poolSize: 3 });
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.kill('SIGKILL')));
  await db.close();
  await testDb.drop();
});

const indexOf = (p: RoleProcess, msg: string): number => p.lines.findIndex((line) => line['msg'] === msg);
const API_LISTENING = 'quartermaster API listening';

describe('npm start', () => {
  it('the leader loads and opens the API only after its first cycle has ended', async () => {
    // The first cycle is held at its cycle lock, taken here first: the API must not listen meanwhile.
    const holder = await db.pool.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [CYCLE_LOCK_KEY]);
    let locked = true;
    try {
      const all = spawnRole('all', childEnv(testDb.url, uniquePrefix('start-order'), { LOG_LEVEL: 'debug', QM_API_WAITS_FOR_FIRST_CYCLE_MS: '600000' }));
      running.push(all);
      await waitFor('it leads', () => Promise.resolve(indexOf(all, 'became leader') >= 0 ? true : undefined), 60_000);
      // Without the wait the API would listen now, within seconds; give it up to 10 s, then let the cycle go.
      await waitFor('10 s, or the API listening', () => Promise.resolve(indexOf(all, API_LISTENING) >= 0 ? true : undefined), 10_000).catch(() => undefined);
      await holder.query('SELECT pg_advisory_unlock($1)', [CYCLE_LOCK_KEY]);
      locked = false;
      await waitFor('the API listens', () => Promise.resolve(indexOf(all, API_LISTENING) >= 0 ? true : undefined), 60_000);
      const firstCycle = all.lines.findIndex((line) => line['msg'] === 'idle cycle' || line['msg'] === 'cycle committed');
      expect(firstCycle).toBeGreaterThanOrEqual(0);
      expect(indexOf(all, API_LISTENING)).toBeGreaterThan(firstCycle);
      await all.kill('SIGTERM');
    } finally {
      if (locked) await holder.query('SELECT pg_advisory_unlock($1)', [CYCLE_LOCK_KEY]).catch(() => undefined);
      holder.release();
    }
  });

  it('a standby (another process holds the lease) opens the API after its first election round, without a cycle', async () => {
    await db.pool.query(
      `INSERT INTO scheduler_leases (name, holder, fencing_token, renewed_at, expires_at)
       VALUES ('scheduler', 'someone-else', 41, now(), now() + interval '10 minutes')
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, fencing_token = excluded.fencing_token,
         renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`,
    );
    const all = spawnRole('all', childEnv(testDb.url, uniquePrefix('start-standby'), { LOG_LEVEL: 'debug', QM_API_WAITS_FOR_FIRST_CYCLE_MS: '600000' }));
    running.push(all);
    await waitFor('the API listens', () => Promise.resolve(indexOf(all, API_LISTENING) >= 0 ? true : undefined), 60_000);
    expect(indexOf(all, 'became leader')).toBe(-1);
    expect(all.lines.some((line) => line['msg'] === 'idle cycle' || line['msg'] === 'cycle committed')).toBe(false);
    await all.kill('SIGTERM');
  });
});
