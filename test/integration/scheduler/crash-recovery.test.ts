import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { executorStep, findViolations, jobStates, outboxStates, seedFleet, submitJobs } from './fleet.js';
import { spawnRole, type RoleProcess } from './processes.js';
import { childEnv, sleep } from './env.js';
import { flushPrefix, uniquePrefix, waitFor } from './support.js';

jest.setTimeout(300_000);

let testDb: TestDatabase;
let db: Database;
const running: RoleProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_crash' });
  db = new Database(testDb.url, { poolSize: 6 });
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.kill('SIGKILL')));
  await db.close();
  await testDb.drop();
});

function envFor(prefix: string): Record<string, string> {
  return childEnv(testDb.url, prefix);
}

function start(role: 'scheduler' | 'worker', env: Record<string, string>): RoleProcess {
  const p = spawnRole(role, env);
  running.push(p);
  return p;
}

/** A deterministic pseudo-random sequence (seeded), so a failing run can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}


describe('scheduler processes killed with SIGKILL at random points (real Postgres, Redis, child processes)', () => {
  it('loses no job, admits none twice, never over-allocates a node, and ends with every outbox entry done', async () => {
    const seed = Number(process.env['QM_CRASH_SEED'] ?? Date.now() % 100_000);
    const rnd = random(seed);
    const prefix = uniquePrefix('crash');
    const env = envFor(prefix);
    await seedFleet(db.pool, { nodes: 30, perNode: 8 });

    let worker = start('worker', env);
    await worker.ready;

    // Traffic: jobs keep arriving and finishing while schedulers die.
    let stop = false;
    let submitted = 0;
    const target = 1000;
    const traffic = (async () => {
      let wave = 0;
      let lastWaveAt = 0;
      while (!stop) {
        if (submitted < target && Date.now() - lastWaveAt >= 400) {
          lastWaveAt = Date.now();
          const shape = [
            { replicas: 1, perReplica: 1 },
            { replicas: 1, perReplica: 4 },
            { replicas: 2, perReplica: 8 },
          ][wave % 3]!;
          submitted += (await submitJobs(db.pool, 20, { ...shape, tag: `w${wave}` })).length;
          wave++;
        }
        await executorStep(db.pool, 200);
        await sleep(60);
      }
    })();

    const kills = 10;
    let selfKilled = 0;
    const violationsSeen: unknown[] = [];
    for (let i = 0; i < kills; i++) {
      if (i % 2 === 0) {
        // Killed from outside at a random moment: mid-cycle, mid-commit, mid-reconcile or idle.
        const scheduler = start('scheduler', env);
        await scheduler.ready;
        await sleep(200 + Math.floor(rnd() * 1800));
        await scheduler.kill('SIGKILL');
      } else {
        // Dies on its own right after a commit, before enqueueing that cycle's side effects.
        const scheduler = start('scheduler', { ...env, QM_TEST_FAILPOINTS: 'after-commit:0.25' });
        // The scheduler runs (and may commit, and die at the failpoint) before its health server is up and it
        // logs "started": either is the start this case waits for.
        await scheduler.ready.catch(() => undefined);
        // It dies at one of its committed cycles (a quarter of them); it commits as long as there is work, so
        // wait for its death, or for the work to run out (then nothing can make it commit again).
        let exited = false;
        void scheduler.exited.then(() => (exited = true));
        await waitFor(
          `the failpoint scheduler died after a commit, or every job finished (seed ${seed})`,
          async () => exited || (submitted >= target && (await jobStates(db.pool))['SUCCEEDED'] === target),
          180_000,
          100,
        );
        if (exited && scheduler.child.signalCode === 'SIGKILL') selfKilled++;
        await scheduler.kill('SIGKILL');
      }
      if (i === kills / 2) {
        await worker.kill('SIGKILL'); // and a worker, while it runs entries
        worker = start('worker', env);
        await worker.ready;
      }
      const v = await findViolations(db.pool);
      if (v.overAllocatedNodes.length || v.admittedTwice.length || v.allocationsOfNonHolding || v.holdingWithoutAllocation) violationsSeen.push(v);
    }

    // A last scheduler runs to the end: every job must finish, every side effect must be done.
    const last = start('scheduler', env);
    await last.ready;
    await waitFor(
      `all ${target} jobs succeeded (seed ${seed})`,
      async () => submitted >= target && (await jobStates(db.pool))['SUCCEEDED'] === target,
      180_000,
      200,
    );
    stop = true;
    await traffic;
    await waitFor(`every outbox entry done (seed ${seed})`, async () => {
      const o = await outboxStates(db.pool);
      return Object.keys(o).length === 1 && o['done']! > 0;
    }, 60_000, 200);

    expect(selfKilled).toBeGreaterThan(0);
    expect(violationsSeen).toEqual([]);
    expect(await findViolations(db.pool)).toEqual({ overAllocatedNodes: [], admittedTwice: [], allocationsOfNonHolding: 0, holdingWithoutAllocation: 0 });
    expect(await jobStates(db.pool)).toEqual({ SUCCEEDED: target });
    // Every admission is in the decision log exactly once and every cycle was committed under a lease token.
    const { rows } = await db.pool.query<{ admitted: number; leaders: number }>(
      `SELECT (SELECT count(*)::int FROM job_transitions WHERE "to" = 'ADMITTED') AS admitted,
              (SELECT count(DISTINCT leader)::int FROM scheduler_cycles) AS leaders`,
    );
    expect(rows[0]!.admitted).toBe(target);
    expect(rows[0]!.leaders).toBeGreaterThan(1);
    await last.kill('SIGTERM');
    await worker.kill('SIGTERM');
    await flushPrefix(prefix);
  });
});
