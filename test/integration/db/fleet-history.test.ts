// The fleet history on a real Postgres: a minute sample per flavor and per team (offered, held, asked, waits),
// one per minute however often it is called, rolled up into the hour and the day, and each grain dropped after
// its retention.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Database, createTestDatabase, moveJobs, readFleetHistory, recordFleetHistory, type TestDatabase } from '#db';
import { seedFleet, submitJobs } from '../scheduler/fleet.js';

let testDb: TestDatabase;
let db: Database;
const MIN = 60_000;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'fleet_history' });
  db = new Database(testDb.url, { poolSize: 2 });
  // h100: 3 nodes of 8, one cordoned; vision's nominal 24 (seedFleet), nlp's 8.
  await seedFleet(db.pool, { nodes: 3, perNode: 8 });
  await db.pool.query(`UPDATE nodes SET schedulable = false WHERE name = 'node-00003'`);
  await db.pool.query(`INSERT INTO teams (name) VALUES ('nlp')`);
  await db.pool.query(`INSERT INTO quotas (team, flavor, nominal) VALUES ('nlp', 'h100-80gb', 8)`);
  // vision holds 8 (one job running); nlp waits with two jobs of 2 × 4 and 1 × 8.
  const [running] = await submitJobs(db.pool, 1, { tag: 'run', replicas: 1, perReplica: 8 });
  const { results } = await moveJobs(
    db.pool,
    [{ jobId: running!, to: 'ADMITTED', reason: 'fixture', admission: { flavor: 'h100-80gb', replicas: 1, preempts: [], placement: [{ replica: 0, node: 'node-00001', accelerators: 8, cpuMillis: 0, memoryMiB: 0 }] } }],
    { actor: 'fixture' },
  );
  expect(results.every((r) => r.moved)).toBe(true);
  await submitJobs(db.pool, 1, { tag: 'wait-a', team: 'nlp', replicas: 2, perReplica: 4 });
  await submitJobs(db.pool, 1, { tag: 'wait-b', team: 'nlp', replicas: 1, perReplica: 8 });
  // Waited 10 and 30 minutes (as of the samples below).
  await db.pool.query(`UPDATE jobs SET queued_at = $1 WHERE name = 'wait-a-1'`, [new Date(T(0) - 10 * MIN)]);
  await db.pool.query(`UPDATE jobs SET queued_at = $1 WHERE name = 'wait-b-1'`, [new Date(T(0) - 30 * MIN)]);
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

/** 2026-12-07T10:00:00Z + m minutes. */
function T(m: number): number {
  return Date.UTC(2026, 11, 7, 10, 0) + m * MIN;
}

const window = (resolution: 'minute' | 'hour' | 'day') => ({ resolution, from: new Date(T(-24 * 60)), to: new Date(T(48 * 60)), limit: 1000 });

describe('fleet history', () => {
  it('a minute sample: the flavor offers its schedulable nodes, the teams their nominal; held, asked and waits per team and in all', async () => {
    expect(await recordFleetHistory(db.pool, new Date(T(0) + 5_000))).toBe(3);
    // A second call in the same minute writes nothing (reconcile calls it every few seconds).
    expect(await recordFleetHistory(db.pool, new Date(T(0) + 40_000))).toBe(0);
    const rows = await readFleetHistory(db.pool, window('minute'));
    expect(rows.map((r) => [r.flavor, r.team, r.capacity, r.allocated, r.pendingJobs, r.pendingAccelerators, r.samples])).toEqual([
      ['h100-80gb', null, 16, 8, 2, 16, 1],
      ['h100-80gb', 'nlp', 8, 0, 2, 16, 1],
      ['h100-80gb', 'vision', 24, 8, 0, 0, 1],
    ]);
    const nlp = rows[1]!;
    expect(nlp.at).toEqual(new Date(T(0)));
    // Waits at 10:00:05: 10 min 5 s and 30 min 5 s.
    expect(nlp.waitMaxSeconds).toBeCloseTo(30 * 60 + 5, 3);
    expect(nlp.waitP50Seconds).toBeCloseTo(20 * 60 + 5, 3);
    expect(rows[2]!.waitMaxSeconds).toBeNull();
  });

  it('the hour and the day are the averages of their minutes (weighted), their waits the longest', async () => {
    // One more minute with vision's job ended: the hour averages 8 and 0.
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id::text AS id FROM jobs WHERE name = 'run-1'`);
    for (const to of ['RUNNING', 'SUCCEEDED'] as const) {
      const { results } = await moveJobs(db.pool, [{ jobId: rows[0]!.id, to, reason: 'fixture' }], { actor: 'fixture' });
      expect(results.every((r) => r.moved)).toBe(true);
    }
    expect(await recordFleetHistory(db.pool, new Date(T(1) + 1_000))).toBe(3);
    const hour = await readFleetHistory(db.pool, window('hour'));
    expect(hour.map((r) => [r.at.toISOString(), r.team, r.allocated, r.samples])).toEqual([
      ['2026-12-07T10:00:00.000Z', null, 4, 2],
      ['2026-12-07T10:00:00.000Z', 'nlp', 0, 2],
      ['2026-12-07T10:00:00.000Z', 'vision', 4, 2],
    ]);
    expect(hour[1]!.waitMaxSeconds).toBeCloseTo(31 * 60 + 1, 3);
    const day = await readFleetHistory(db.pool, window('day'));
    expect(day.map((r) => [r.at.toISOString(), r.team, r.allocated, r.samples])).toEqual([
      ['2026-12-07T00:00:00.000Z', null, 4, 2],
      ['2026-12-07T00:00:00.000Z', 'nlp', 0, 2],
      ['2026-12-07T00:00:00.000Z', 'vision', 4, 2],
    ]);
  });

  it('a member reads the flavor rows and their own teams only; a window and a flavor narrow it', async () => {
    const mine = await readFleetHistory(db.pool, { ...window('minute'), teams: ['nlp'] });
    expect([...new Set(mine.map((r) => r.team))]).toEqual([null, 'nlp']);
    const first = await readFleetHistory(db.pool, { ...window('minute'), to: new Date(T(1)) });
    expect(new Set(first.map((r) => r.at.getTime()))).toEqual(new Set([T(0)]));
    expect(await readFleetHistory(db.pool, { ...window('minute'), flavor: 'a100-80gb' })).toEqual([]);
  });

  it('each grain is dropped after its retention', async () => {
    const retention = { minuteMs: 60 * MIN, hourMs: 48 * 60 * MIN, dayMs: 400 * 24 * 60 * MIN };
    // Two hours later: the minutes of 10:00 and 10:01 are past their hour of retention; the hour row stays.
    expect(await recordFleetHistory(db.pool, new Date(T(120)), retention)).toBe(3);
    const minutes = await readFleetHistory(db.pool, window('minute'));
    expect(new Set(minutes.map((r) => r.at.getTime()))).toEqual(new Set([T(120)]));
    expect((await readFleetHistory(db.pool, window('hour'))).map((r) => r.at.getTime())).toEqual([T(0), T(0), T(0), T(120), T(120), T(120)]);
  });
});
