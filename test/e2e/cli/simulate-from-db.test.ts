import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runCycle } from '#core';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { runCli } from '../../../apps/cli/src/cli.js';

jest.setTimeout(120_000);

/** `qm simulate --from-db` against a real, uniquely named Postgres database. */
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const H = 3_600_000;
let testDb: TestDatabase;
let db: Database;

async function qm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: { write: (s: string) => ((stdout += s), true) },
    stderr: { write: (s: string) => ((stderr += s), true) },
    repoRoot: process.cwd(),
    cwd: process.cwd(),
    env: { DATABASE_URL: testDb.url },
    scheduler: runCycle,
    now: () => NOW,
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'cli_sim' });
  db = new Database(testDb.url, { poolSize: 2 });
  const p = db.prisma;
  await p.flavor.create({ data: { name: 'h100-80gb', kind: 'nvidia_gpu', resourceName: 'nvidia.com/gpu' } });
  await p.cohort.create({ data: { name: 'research' } });
  for (const team of ['vision', 'nlp']) {
    await p.team.create({ data: { name: team, cohort: 'research' } });
    await p.quota.create({ data: { team, flavor: 'h100-80gb', nominal: 8 } });
  }
  for (const name of ['n1', 'n2']) await p.node.create({ data: { name, flavor: 'h100-80gb', accelerators: 8, cpuMillis: 64_000, memoryMiB: 512_000 } });
  const job = (name: string, team: string, replicas: number, submitted: number, started: number | null, finished: number | null, state: 'SUCCEEDED' | 'CANCELLED') =>
    p.job.create({
      data: {
        name,
        team,
        kind: 'training',
        replicas,
        minReplicas: replicas,
        acceleratorsPerReplica: 8,
        flavors: ['h100-80gb'],
        template: { image: 'x' },
        createdBy: 'test',
        state,
        flavor: started === null ? null : 'h100-80gb',
        submittedAt: new Date(submitted),
        queuedAt: new Date(submitted),
        startedAt: started === null ? null : new Date(started),
        finishedAt: finished === null ? null : new Date(finished),
      },
    });
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
    let stderr = '';
    const code = await runCli(['simulate', '--from-db', '--no-progress'], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => ((stderr += s), true) },
      repoRoot: process.cwd(),
      cwd: process.cwd(),
      env: { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nowhere' },
      scheduler: runCycle,
      now: () => NOW,
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^qm: cannot read the job history from postgresql:\/\/.*127\.0\.0\.1:1\/nowhere: /);
  });
});
