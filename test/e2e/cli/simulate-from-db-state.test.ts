import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { H, NOW, historyJob, qmInProcess, seedSimulatedCluster } from './simulate-support.js';

jest.setTimeout(120_000);

/**
 * `qm simulate --from-db --since` starts from the cluster's state at `since` (real Postgres, its own
 * database): jobs running then hold their accelerators, jobs waiting then are queued — not an empty cluster.
 */
const SINCE = NOW - 24 * H;
let testDb: TestDatabase;
let db: Database;

const qm = (args: string[]) => qmInProcess(args, { env: { DATABASE_URL: testDb.url } });
const job = (name: string, team: string, replicas: number, submitted: number, started: number, finished: number) =>
  historyJob(db, { name, team, replicas, submitted, started, finished, state: 'SUCCEEDED' });

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'cli_sim_state' });
  db = new Database(testDb.url, { poolSize: 2 });
  await seedSimulatedCluster(db);
  // Ended before the window: not part of the replay.
  await job('done-before', 'nlp', 2, SINCE - 30 * H, SINCE - 30 * H, SINCE - 20 * H);
  // Running at SINCE on the whole fleet (16 GPUs) until SINCE + 2 h.
  await job('holder', 'vision', 2, SINCE - 10 * H, SINCE - 8 * H, SINCE + 2 * H);
  // Waiting at SINCE (submitted 1 h before), runs 1 h.
  await job('waiter', 'nlp', 1, SINCE - H, SINCE + 2 * H, SINCE + 3 * H);
  // Submitted in the window, runs 2 h.
  await job('fresh', 'vision', 1, SINCE + 0.5 * H, SINCE + 2 * H, SINCE + 4 * H);
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe('qm simulate --from-db --since (from the state at since)', () => {
  it('replays with the jobs running at since holding their accelerators and the waiting ones queued', async () => {
    const r = await qm(['simulate', '--from-db', '--since', '24h', '--policy', 'no-preemption', '--json', '--no-progress']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rejected).toEqual([]);
    expect(out.input).toMatchObject({ jobs: 3, accelerators: 16, teams: 2 });
    const m = out.runs[0].metrics;
    expect(m.overall.completed).toBe(3);
    // holder waited 2 h before since; waiter (−1 h) and fresh (+0.5 h) wait for holder's end at +2 h.
    expect(m.teams.nlp.queueingDelaySeconds.mean).toBeCloseTo(3 * 3600, 6);
    expect(m.teams.vision.queueingDelaySeconds.max).toBeCloseTo(2 * 3600, 6);
    expect(m.overall.queueingDelaySeconds.mean).toBeCloseTo(((2 + 3 + 1.5) * 3600) / 3, 6);
  });

  it('says in the summary what state it started from', async () => {
    const r = await qm(['simulate', '--from-db', '--since', '24h', '--policy', 'no-preemption', '--no-progress']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`replayed from the cluster's state at ${new Date(SINCE).toISOString()}: 1 job running (placed first fit on its flavor), 1 waiting`);
  });
});
