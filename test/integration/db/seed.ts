import { afterAll, beforeAll } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';

/** Fixed ids, so expected snapshots can be written out literally. */
export const ID = {
  runA: '00000000-0000-4000-8000-00000000000a',
  runB: '00000000-0000-4000-8000-00000000000b',
  pend1: '00000000-0000-4000-8000-000000000001',
  pend2: '00000000-0000-4000-8000-000000000002',
  pend3: '00000000-0000-4000-8000-000000000003',
  done: '00000000-0000-4000-8000-0000000000dd',
} as const;

export const T0 = Date.parse('2026-11-30T00:00:00.000Z');

/**
 * A small fleet: 2 flavors, 3 nodes (one cordoned, one with external usage), a cohort with two teams
 * and a team outside it, quotas with and without limits, 2 running jobs with allocations, 3 pending
 * jobs and a finished one (which no snapshot shows).
 */
export async function seedFleet(db: Database): Promise<void> {
  const p = db.prisma;
  await p.flavor.createMany({
    data: [
      { name: 'h100-80gb', kind: 'nvidia_gpu', resourceName: 'nvidia.com/gpu', memoryGiB: 80, relativeSpeed: 1, costPerHour: 4 },
      { name: 'tpu-v5e', kind: 'google_tpu', resourceName: 'google.com/tpu', relativeSpeed: 0.8, costPerHour: 1.2 },
    ],
  });
  await p.node.createMany({
    data: [
      { name: 'gpu-a', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, zone: 'z1', block: 'b1', domain: 'nvl-1' },
      { name: 'gpu-b', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, zone: 'z1', block: 'b2',
        externalAccelerators: 2, externalCpuMillis: 1000, externalMemoryMiB: 2048, source: 'kubernetes' },
      { name: 'tpu-a', flavor: 'tpu-v5e', accelerators: 4, cpuMillis: 48000, memoryMiB: 196608, zone: 'z2', domain: 'slice-1', tpuShape: '2x4',
        schedulable: false },
    ],
  });
  await p.cohort.create({ data: { name: 'research', description: 'shared pool' } });
  await p.team.createMany({
    data: [
      { name: 'nlp', cohort: 'research', fairShareWeight: 2, withinTeam: 'LowerOrNewerEqualPriority', reclaimWithinCohort: 'LowerPriority' },
      { name: 'vision', cohort: 'research' },
      { name: 'solo', withinTeam: 'Never', reclaimWithinCohort: 'Never' },
    ],
  });
  await p.quota.createMany({
    data: [
      { team: 'nlp', flavor: 'h100-80gb', nominal: 8, borrowingLimit: 8, lendingLimit: null },
      { team: 'vision', flavor: 'h100-80gb', nominal: 8, borrowingLimit: null, lendingLimit: 4 },
      { team: 'solo', flavor: 'tpu-v5e', nominal: 4 },
    ],
  });
  const base = {
    kind: 'training' as const,
    flavors: ['h100-80gb'],
    template: { image: 'trainer:1' },
    createdBy: 'alice',
    cpuMillisPerReplica: 8000,
    memoryMiBPerReplica: 65536,
  };
  await p.job.createMany({
    data: [
      { ...base, id: ID.runA, name: 'run-a', team: 'nlp', priority: 10, replicas: 1, minReplicas: 1, acceleratorsPerReplica: 8,
        state: 'RUNNING', flavor: 'h100-80gb', admittedReplicas: 1, submittedAt: new Date(T0), queuedAt: new Date(T0),
        admittedAt: new Date(T0 + 1000), startedAt: new Date(T0 + 2000), expectedRuntimeSeconds: 3600 },
      { ...base, id: ID.runB, name: 'run-b', team: 'vision', priority: 0, replicas: 2, minReplicas: 1, acceleratorsPerReplica: 2,
        state: 'ADMITTED', flavor: 'h100-80gb', admittedReplicas: 2, submittedAt: new Date(T0 + 10), queuedAt: new Date(T0 + 10),
        admittedAt: new Date(T0 + 3000), kind: 'batch_inference' },
      { ...base, id: ID.pend1, name: 'pend-1', team: 'vision', priority: 100, replicas: 2, minReplicas: 2, acceleratorsPerReplica: 4,
        submittedAt: new Date(T0 + 5000), queuedAt: new Date(T0 + 5000), flavors: ['h100-80gb', 'tpu-v5e'], flavorSelection: 'fastest',
        speeds: { 'h100-80gb': 2.5 }, topologyLevel: 'zone', expectedRuntimeSeconds: 600, kind: 'eval' },
      { ...base, id: ID.pend2, name: 'pend-2', team: 'solo', priority: 5, replicas: 1, minReplicas: 1, acceleratorsPerReplica: 4,
        flavors: ['tpu-v5e'], topologyLevel: 'domain', tpuShape: '2x4', submittedAt: new Date(T0 + 6000), queuedAt: new Date(T0 + 9000) },
      { ...base, id: ID.pend3, name: 'pend-3', team: 'nlp', priority: 1, replicas: 4, minReplicas: 4, acceleratorsPerReplica: 8,
        submittedAt: new Date(T0 + 7000), queuedAt: new Date(T0 + 7000) },
      { ...base, id: ID.done, name: 'done', team: 'nlp', replicas: 1, minReplicas: 1, acceleratorsPerReplica: 1, state: 'SUCCEEDED',
        submittedAt: new Date(T0 - 9000), finishedAt: new Date(T0 - 1000) },
    ],
  });
  await p.allocation.createMany({
    data: [
      { jobId: ID.runA, replica: 0, node: 'gpu-a', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 8000, memoryMiB: 65536 },
      { jobId: ID.runB, replica: 1, node: 'gpu-b', flavor: 'h100-80gb', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
      { jobId: ID.runB, replica: 0, node: 'gpu-b', flavor: 'h100-80gb', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
    ],
  });
}

/** Row counts of every table a commit writes, plus job states: equal fingerprints = nothing written. */
export async function fingerprint(db: Database): Promise<string> {
  const { rows } = await db.pool.query<{ f: string }>(`
    SELECT concat_ws('|',
      (SELECT count(*) FROM allocations), (SELECT count(*) FROM job_transitions), (SELECT count(*) FROM events),
      (SELECT count(*) FROM outbox), (SELECT count(*) FROM scheduler_cycles),
      (SELECT string_agg(concat(id, ':', state, ':', version, ':', pending_code, ':', reservation::text), ',' ORDER BY id) FROM jobs)) AS f`);
  return rows[0]!.f;
}

/**
 * A database of its own with the seeded fleet for the tests of one file: created before them, dropped
 * after. Returns the handle's getter (the handle exists once beforeAll has run).
 */
export function seededDatabase(label: string, poolSize = 4): () => Database {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase({ label });
    db = new Database(testDb.url, { poolSize });
    await seedFleet(db);
  });
  afterAll(async () => {
    await db.close();
    await testDb.drop();
  });
  return () => db;
}
