import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { H, NOW, qmInProcess, seedSimulatedCluster } from './simulate-support.js';

jest.setTimeout(120_000);

/**
 * `qm simulate --from-db` replays a job that was preempted and requeued from a checkpoint with only the
 * work after that checkpoint (`jobs.resume_fraction`), as the scheduler's snapshot gives it to the core
 * (real Postgres, its own database).
 */
const SINCE = NOW - 24 * H;
let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'cli_sim_resume' });
  db = new Database(testDb.url, { poolSize: 2 });
  await seedSimulatedCluster(db);
  // Waiting at SINCE (submitted 1 h before it), 4 h of work of which 75 % were checkpointed before its preemption.
  await db.prisma.job.create({
    data: {
      name: 'requeued',
      team: 'vision',
      kind: 'training',
      replicas: 1,
      minReplicas: 1,
      acceleratorsPerReplica: 8,
      flavors: ['h100-80gb'],
      template: { image: 'x' },
      createdBy: 'test',
      state: 'PENDING',
      expectedRuntimeSeconds: 4 * 3600,
      checkpoint: { intervalSeconds: 600, gracePeriodSeconds: 60 },
      resumeFraction: 0.75,
      submittedAt: new Date(SINCE - H),
      queuedAt: new Date(SINCE - 0.5 * H),
    },
  });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe('qm simulate --from-db (a job requeued from a checkpoint)', () => {
  it('runs it for the rest of its work only', async () => {
    const r = await qmInProcess(['simulate', '--from-db', '--since', '24h', '--policy', 'full', '--json', '--no-progress'], { env: { DATABASE_URL: testDb.url } });
    expect(r.code).toBe(0);
    const m = JSON.parse(r.stdout).runs[0].metrics;
    expect(m.overall.completed).toBe(1);
    // Queued at since (1 h after its submission) on an empty fleet, then 1 h of the 4: JCT 2 h (not 5 h).
    expect(m.overall.jctSeconds.mean).toBeCloseTo(2 * 3600, 6);
  });
});
