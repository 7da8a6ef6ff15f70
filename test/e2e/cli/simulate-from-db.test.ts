import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { H, NOW, historyJob, qmInProcess, seedSimulatedCluster } from './simulate-support.js';

jest.setTimeout(120_000);

/** `qm simulate --from-db` against a real, uniquely named Postgres database. */
let testDb: TestDatabase;
let db: Database;

const qm = (args: string[]) => qmInProcess(args, { env: { DATABASE_URL: testDb.url } });
const job = (name: string, team: string, replicas: number, submitted: number, started: number | null, finished: number | null, state: 'SUCCEEDED' | 'CANCELLED') =>
  historyJob(db, { name, team, replicas, submitted, started, finished, state });

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'cli_sim' });
  db = new Database(testDb.url, { poolSize: 2 });
  await seedSimulatedCluster(db);
  const t0 = NOW - 72 * H;
  await job('old', 'vision', 1, NOW - 240 * H, NOW - 240 * H, NOW - 239 * H, 'SUCCEEDED');
  await job('big', 'vision', 2, t0, t0, t0 + 2 * H, 'SUCCEEDED');
  await job('small', 'vision', 1, t0 + 0.5 * H, t0 + 2 * H, t0 + 3 * H, 'SUCCEEDED');
  await job('nlp-a', 'nlp', 1, t0 + 0.5 * H, t0 + 2 * H, t0 + 3 * H, 'SUCCEEDED');
  await job('gone', 'nlp', 1, t0 + H, null, t0 + 1.5 * H, 'CANCELLED');
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe('qm simulate --from-db', () => {
  it('replays the window with the stored fleet and quotas, and reports a quota what-if per team', async () => {
    const r = await qm(['simulate', '--from-db', '--since', '7d', '--policy', 'no-preemption', '--quota', 'vision/h100-80gb=16', '--json', '--no-progress']);
    expect(r.stderr).toContain('cancelled before it started');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.input).toMatchObject({ jobs: 3, accelerators: 16, teams: 2 });
    expect(out.rejected).toEqual([{ line: 4, source: expect.stringMatching(/^db job /), reason: 'cancelled before it started' }]);
    const m = out.runs[0].metrics;
    expect(m.overall.completed).toBe(3);
    // big (2 h, whole fleet) from t0; small and nlp-a (1 h each, 8 GPUs) wait for it: 1.5 h each.
    expect(m.overall.queueingDelaySeconds.mean).toBeCloseTo((0 + 1.5 + 1.5) * 3600 / 3, 6);
    expect(out.whatIf[0].diff.changes).toEqual(['quota vision/h100-80gb=16']);
    expect(out.whatIf[0].diff.teams.map((t: { team: string }) => t.team)).toEqual(['nlp', 'vision']);
  });

  it('fails with exit 1 and a clear message when Postgres is unreachable', async () => {
    const { code, stderr } = await qmInProcess(['simulate', '--from-db', '--no-progress'], { env: { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nowhere' } });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^qm: cannot read the job history from postgresql:\/\/.*127\.0\.0\.1:1\/nowhere: /);
  });
});
