// WorkloadJobRepository.lastRelease on a real Postgres: how a workload job last lost an allocation (the status
// sync words the end of a job whose workload finished while it waited with it), null when it never held one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Database, WorkloadJobRepository, createTestDatabase, moveJobs, type JobMove, type TestDatabase } from '#db';
import { seedFleet, submitJobs } from '../scheduler/fleet.js';

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'workload_jobs' });
  db = new Database(testDb.url, { poolSize: 2 });
  await seedFleet(db.pool, { nodes: 2, perNode: 8 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

async function move(moves: JobMove[]): Promise<void> {
  const { results } = await moveJobs(db.pool, moves, { actor: 'fixture' });
  expect(results.filter((r) => !r.moved)).toEqual([]);
}

describe('how a workload job last lost its allocation', () => {
  it('the latest preemption or requeue of a job that held one; null for a job that never did', async () => {
    const [ran, waited] = await submitJobs(db.pool, 2, { tag: 'release' });
    const admit = (jobId: string): JobMove => ({
      jobId,
      to: 'ADMITTED',
      reason: 'fixture admission',
      admission: { flavor: 'h100-80gb', replicas: 1, preempts: [], placement: [{ replica: 0, node: 'node-00001', accelerators: 1, cpuMillis: 0, memoryMiB: 0 }] },
    });
    const repository = new WorkloadJobRepository(db);
    await move([admit(ran!)]);
    await move([{ jobId: ran!, to: 'PENDING', reason: 'gang timeout: never started' }]);
    expect(await repository.lastRelease(ran!)).toEqual({ to: 'PENDING', reason: 'gang timeout: never started' });
    await move([admit(ran!)]);
    await move([{ jobId: ran!, to: 'RUNNING', reason: 'running' }]);
    await move([{ jobId: ran!, to: 'PREEMPTED', reason: 'preempted by nlp/nlp-c' }]);
    await move([{ jobId: ran!, to: 'PENDING', reason: 'requeued' }]);
    expect(await repository.lastRelease(ran!)).toEqual({ to: 'PREEMPTED', reason: 'preempted by nlp/nlp-c' });
    expect(await repository.lastRelease(waited!)).toBeNull();
  });
});
