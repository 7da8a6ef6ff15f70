import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runCycle } from '#core';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { runCli } from '../../../apps/cli/src/cli.js';

jest.setTimeout(120_000);

/**
 * `qm simulate --from-db --since` starts from the cluster's state at `since` (real Postgres, its own
 * database): jobs running then hold their accelerators, jobs waiting then are queued — not an empty cluster.
 */
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const H = 3_600_000;
const SINCE = NOW - 24 * H;
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
  testDb = await createTestDatabase({ label: 'cli_sim_state' });
  db = new Database(testDb.url, { poolSize: 2 });
  const p = db.prisma;
  await p.flavor.create({ data: { name: 'h100-80gb', kind: 'nvidia_gpu', resourceName: 'nvidia.com/gpu' } });
  await p.cohort.create({ data: { name: 'research' } });
  for (const team of ['vision', 'nlp']) {
    await p.team.create({ data: { name: team, cohort: 'research' } });
    await p.quota.create({ data: { team, flavor: 'h100-80gb', nominal: 8 } });
  }
  for (const name of ['n1', 'n2']) await p.node.create({ data: { name, flavor: 'h100-80gb', accelerators: 8, cpuMillis: 64_000, memoryMiB: 512_000 } });
  const job = (name: string, team: string, replicas: number, submitted: number, started: number, finished: number) =>
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
        state: 'SUCCEEDED',
        flavor: 'h100-80gb',
        submittedAt: new Date(submitted),
        queuedAt: new Date(submitted),
        startedAt: new Date(started),
        finishedAt: new Date(finished),
      },
    });
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
