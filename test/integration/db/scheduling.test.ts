import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { DEFAULT_OPTIONS, checkInvariants, runCycle, type BudgetedCycleResult, type CycleResult, type Snapshot } from '#core';
import {
  Database,
  FencingError,
  InvalidCycleResultError,
  acquireOrRenewLease,
  assertFencing,
  commitCycle,
  createTestDatabase,
  loadSnapshot,
  loadSnapshotWithVersions,
  moveJobs,
  nextCycleNumber,
  pruneHistory,
  releaseLease,
  type TestDatabase,
} from '#db';
import { ID, T0, fingerprint, seedFleet } from './seed.js';

// Databases are created and migrated per test on a shared, sometimes busy server: no 5 s default.
jest.setTimeout(60_000);

let testDb: TestDatabase;
let db: Database;

beforeEach(async () => {
  testDb = await createTestDatabase({ label: 'sched' });
  db = new Database(testDb.url);
  await seedFleet(db);
});

afterEach(async () => {
  await db.close();
  await testDb.drop();
});

const LEASE = 'scheduler';
const NOW = T0 + 10_000;

const common = { preemptible: true, cpuMillisPerReplica: 8000, memoryMiBPerReplica: 65536 };

const EXPECTED_SNAPSHOT: Snapshot = {
  now: NOW,
  options: DEFAULT_OPTIONS,
  flavors: [
    { name: 'h100-80gb', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 4, memoryGiB: 80,
      // The defaults per accelerator kind (no topologyLabels were set): which node labels each level is read from.
      topologyLabels: { zone: 'topology.kubernetes.io/zone', block: 'quartermaster.io/block', domain: 'nvidia.com/gpu.clique', tpuShape: 'cloud.google.com/gke-tpu-topology' } },
    { name: 'tpu-v5e', kind: 'google-tpu', resourceName: 'google.com/tpu', relativeSpeed: 0.8, costPerHour: 1.2,
      topologyLabels: { zone: 'topology.kubernetes.io/zone', block: 'cloud.google.com/gce-topology-block', domain: 'cloud.google.com/gke-nodepool', tpuShape: 'cloud.google.com/gke-tpu-topology' } },
  ],
  nodes: [
    { name: 'gpu-a', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576,
      topology: { zone: 'z1', block: 'b1', domain: 'nvl-1' }, schedulable: true },
    { name: 'gpu-b', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576,
      topology: { zone: 'z1', block: 'b2' }, schedulable: true, external: { accelerators: 2, cpuMillis: 1000, memoryMiB: 2048 } },
    { name: 'tpu-a', flavor: 'tpu-v5e', accelerators: 4, cpuMillis: 48000, memoryMiB: 196608,
      topology: { zone: 'z2', domain: 'slice-1', tpuShape: '2x4' }, schedulable: false },
  ],
  cohorts: [{ name: 'research' }],
  teams: [
    { name: 'nlp', cohort: 'research', fairShareWeight: 2, preemption: { withinTeam: 'LowerOrNewerEqualPriority', reclaimWithinCohort: 'LowerPriority' } },
    { name: 'solo', cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'Never' } },
    { name: 'vision', cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } },
  ],
  quotas: [
    { team: 'nlp', flavor: 'h100-80gb', nominal: 8, borrowingLimit: 8, lendingLimit: null, cpuMillisLimit: null, memoryMiBLimit: null },
    { team: 'solo', flavor: 'tpu-v5e', nominal: 4, borrowingLimit: null, lendingLimit: null, cpuMillisLimit: null, memoryMiBLimit: null },
    { team: 'vision', flavor: 'h100-80gb', nominal: 8, borrowingLimit: null, lendingLimit: 4, cpuMillisLimit: null, memoryMiBLimit: null },
  ],
  running: [
    { ...common, id: ID.runA, name: 'run-a', team: 'nlp', kind: 'training', priority: 10, replicas: 1, minReplicas: 1,
      acceleratorsPerReplica: 8, flavors: ['h100-80gb'], flavorSelection: 'preference', topology: { level: 'none' },
      expectedRuntimeSeconds: 3600, submittedAt: T0, flavor: 'h100-80gb', admittedAt: T0 + 1000,
      placement: [{ replica: 0, node: 'gpu-a', accelerators: 8, cpuMillis: 8000, memoryMiB: 65536 }] },
    { ...common, id: ID.runB, name: 'run-b', team: 'vision', kind: 'batch-inference', priority: 0, replicas: 2, minReplicas: 1,
      acceleratorsPerReplica: 2, flavors: ['h100-80gb'], flavorSelection: 'preference', topology: { level: 'none' },
      expectedRuntimeSeconds: null, submittedAt: T0 + 10, flavor: 'h100-80gb', admittedAt: T0 + 3000,
      placement: [
        { replica: 0, node: 'gpu-b', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
        { replica: 1, node: 'gpu-b', accelerators: 2, cpuMillis: 8000, memoryMiB: 65536 },
      ] },
  ],
  pending: [
    { ...common, id: ID.pend1, name: 'pend-1', team: 'vision', kind: 'eval', priority: 100, replicas: 2, minReplicas: 2,
      acceleratorsPerReplica: 4, flavors: ['h100-80gb', 'tpu-v5e'], flavorSelection: 'fastest', speeds: { 'h100-80gb': 2.5 },
      topology: { level: 'zone' }, expectedRuntimeSeconds: 600, submittedAt: T0 + 5000, queuedAt: T0 + 5000 },
    { ...common, id: ID.pend2, name: 'pend-2', team: 'solo', kind: 'training', priority: 5, replicas: 1, minReplicas: 1,
      acceleratorsPerReplica: 4, flavors: ['tpu-v5e'], flavorSelection: 'preference', topology: { level: 'domain', tpuShape: '2x4' },
      expectedRuntimeSeconds: null, submittedAt: T0 + 6000, queuedAt: T0 + 9000 },
    { ...common, id: ID.pend3, name: 'pend-3', team: 'nlp', kind: 'training', priority: 1, replicas: 4, minReplicas: 4,
      acceleratorsPerReplica: 8, flavors: ['h100-80gb'], flavorSelection: 'preference', topology: { level: 'none' },
      expectedRuntimeSeconds: null, submittedAt: T0 + 7000, queuedAt: T0 + 7000 },
  ],
};

/** pend-1 reclaims gpu-a from run-a; pend-3 gets a reservation; pend-2 waits on a cordoned node. */
const RESULT: CycleResult = {
  admissions: [
    { jobId: ID.pend1, team: 'vision', flavor: 'h100-80gb', replicas: 2, borrowed: 0, preempts: [ID.runA],
      placement: [
        { replica: 0, node: 'gpu-a', accelerators: 4, cpuMillis: 8000, memoryMiB: 65536 },
        { replica: 1, node: 'gpu-a', accelerators: 4, cpuMillis: 8000, memoryMiB: 65536 },
      ] },
  ],
  preemptions: [
    { victimJobId: ID.runA, victimTeam: 'nlp', preemptorJobId: ID.pend1, kind: 'ReclaimWithinCohort',
      message: 'preempted by a job of team vision (priority 100 > 10) to reclaim 8 h100-80gb lent to team nlp' },
  ],
  reservations: [
    { jobId: ID.pend3, flavor: 'h100-80gb', startAt: T0 + 3_600_000, nodes: [{ node: 'gpu-a', accelerators: 8 }, { node: 'gpu-b', accelerators: 8 }] },
  ],
  pending: [
    { jobId: ID.pend3, code: 'INSUFFICIENT_CAPACITY', message: 'needs 32 h100-80gb, 6 free', position: 1, estimatedStartAt: T0 + 3_600_000 },
    { jobId: ID.pend2, code: 'INSUFFICIENT_CAPACITY', message: 'tpu-a is not schedulable', position: 2, estimatedStartAt: null },
  ],
  stats: { considered: 3, admitted: 1, preempted: 1, reserved: 1 },
};

async function lead(holder = 'sched-1'): Promise<bigint> {
  const lease = await acquireOrRenewLease(db, LEASE, holder, 60_000);
  expect(lease.held).toBe(true);
  return lease.fencingToken;
}

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.pool.query(sql, params)).rows as T[];
}

describe('loadSnapshot', () => {
  it('builds the core Snapshot from the tables: holding jobs with their placements, the queue in order, no finished jobs', async () => {
    expect(await loadSnapshot(db, NOW, DEFAULT_OPTIONS)).toEqual(EXPECTED_SNAPSHOT);
  });

  it('reports the version of every job it read', async () => {
    const { versions } = await loadSnapshotWithVersions(db, NOW, DEFAULT_OPTIONS);
    expect([...versions.keys()].sort()).toEqual([ID.pend1, ID.pend2, ID.pend3, ID.runA, ID.runB].sort());
    expect([...versions.values()]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('commitCycle', () => {
  it('a budget stop is carried out even when the job reported RUNNING after the snapshot: the admissions that use what it held never overcommit a node', async () => {
    const token = await lead();
    const { versions } = await loadSnapshotWithVersions(db, NOW, DEFAULT_OPTIONS);
    // run-b (ADMITTED, 2 × 2 on gpu-b) starts between the snapshot and the commit: its version moves on.
    const started = await moveJobs(db.pool, [{ jobId: ID.runB, to: 'RUNNING', reason: 'executor' }], { actor: 'test' });
    expect(started.results[0]).toMatchObject({ moved: true });
    const result: BudgetedCycleResult = {
      admissions: [
        { jobId: ID.pend1, team: 'vision', flavor: 'h100-80gb', replicas: 1, borrowed: 0, preempts: [],
          placement: [{ replica: 0, node: 'gpu-b', accelerators: 4, cpuMillis: 8000, memoryMiB: 65536 }] },
      ],
      preemptions: [],
      reservations: [],
      pending: [],
      stats: { considered: 1, admitted: 1, preempted: 0, reserved: 0 },
      // The core decided the admission on the snapshot without run-b (its budget stops it).
      budgetStops: [{ jobId: ID.runB, team: 'vision', flavor: 'h100-80gb', accelerators: 4, period: 'day', until: NOW + 3_600_000,
        lostAcceleratorSeconds: 0, lostSince: NOW, gracePeriodSeconds: 0, message: 'stopped: budget used up' }],
    };
    const outcome = await commitCycle(db, { result, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1', versions });
    expect(outcome.stopped).toEqual([ID.runB]);
    expect(outcome.admitted).toEqual([ID.pend1]);
    expect(await rows(`SELECT state::text FROM jobs WHERE id = $1`, [ID.runB])).toEqual([{ state: 'PENDING' }]);
    expect(await rows(`SELECT job_id::text, sum(accelerators)::int AS n FROM allocations WHERE node = 'gpu-b' GROUP BY 1`)).toEqual([{ job_id: ID.pend1, n: 4 }]);
  });

  it('writes admissions, preemptions, queue state, transitions, events, outbox and the cycle in one go', async () => {
    const token = await lead();
    const outcome = await commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 7, leader: 'sched-1', durationMs: 12 });
    expect(outcome.admitted).toEqual([ID.pend1]);
    expect(outcome.preempted).toEqual([ID.runA]);
    expect(outcome.skipped).toEqual([]);

    const jobs = await rows<Record<string, unknown>>(
      `SELECT id::text, state::text, flavor, admitted_replicas, admitted_at, preempted_by::text, preemption_count, queued_at,
              pending_code::text, pending_message, pending_position, pending_estimated_start_at, reservation, version
       FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [[ID.pend1, ID.pend2, ID.pend3, ID.runA]],
    );
    const byId = Object.fromEntries(jobs.map((j) => [j['id'], j]));
    expect(await rows(`SELECT id::text, preempted_jobs::text[] AS p FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id`, [[ID.runA, ID.pend1]])).toEqual([
      { id: ID.pend1, p: [ID.runA] },
      { id: ID.runA, p: [] },
    ]);
    expect(byId[ID.pend1]).toMatchObject({ state: 'ADMITTED', flavor: 'h100-80gb', admitted_replicas: 2, admitted_at: new Date(NOW), pending_code: null, reservation: null, version: 1 });
    expect(byId[ID.runA]).toMatchObject({
      state: 'PENDING', flavor: null, admitted_at: null, preempted_by: ID.pend1, preemption_count: 1, queued_at: new Date(NOW),
      pending_message: RESULT.preemptions[0]!.message, version: 1,
    });
    expect(byId[ID.pend2]).toMatchObject({ pending_code: 'INSUFFICIENT_CAPACITY', pending_message: 'tpu-a is not schedulable', pending_position: 2, pending_estimated_start_at: null, reservation: null, version: 0 });
    expect(byId[ID.pend3]).toMatchObject({
      pending_code: 'INSUFFICIENT_CAPACITY', pending_position: 1, pending_estimated_start_at: new Date(T0 + 3_600_000),
      reservation: { flavor: 'h100-80gb', startAt: T0 + 3_600_000, nodes: [{ node: 'gpu-a', accelerators: 8 }, { node: 'gpu-b', accelerators: 8 }] },
      version: 0,
    });

    expect(await rows(`SELECT job_id::text, replica, node, flavor, accelerators FROM allocations ORDER BY job_id, replica`)).toEqual([
      { job_id: ID.pend1, replica: 0, node: 'gpu-a', flavor: 'h100-80gb', accelerators: 4 },
      { job_id: ID.pend1, replica: 1, node: 'gpu-a', flavor: 'h100-80gb', accelerators: 4 },
      { job_id: ID.runB, replica: 0, node: 'gpu-b', flavor: 'h100-80gb', accelerators: 2 },
      { job_id: ID.runB, replica: 1, node: 'gpu-b', flavor: 'h100-80gb', accelerators: 2 },
    ]);
    expect(await rows(`SELECT job_id::text, "from"::text, "to"::text, at FROM job_transitions ORDER BY id`)).toEqual([
      { job_id: ID.pend1, from: 'PENDING', to: 'ADMITTED', at: new Date(NOW) },
      { job_id: ID.runA, from: 'RUNNING', to: 'PREEMPTED', at: new Date(NOW) },
      { job_id: ID.runA, from: 'PREEMPTED', to: 'PENDING', at: new Date(NOW) },
    ]);
    expect(await rows(`SELECT kind, job_id::text, team, actor FROM events ORDER BY kind, job_id`)).toEqual([
      { kind: 'job.admitted', job_id: ID.pend1, team: 'vision', actor: 'scheduler' },
      { kind: 'job.pending', job_id: ID.pend2, team: 'solo', actor: 'scheduler' },
      { kind: 'job.pending', job_id: ID.pend3, team: 'nlp', actor: 'scheduler' },
      { kind: 'job.preempted', job_id: ID.runA, team: 'nlp', actor: 'scheduler' },
    ]);
    const outbox = await rows<{ id: string; kind: string; payload: unknown; status: string; dedupe_key: string }>(
      `SELECT id::text, kind, payload, status::text, dedupe_key FROM outbox ORDER BY id`,
    );
    // One dedupe scheme (kind[:event]:job:v<version after the move>); admissions are written before preemptions.
    expect(outbox.map(({ kind, payload, status, dedupe_key }) => ({ kind, payload, status, dedupe_key }))).toEqual([
      { kind: 'bind', payload: { jobId: ID.pend1 }, status: 'pending', dedupe_key: `bind:${ID.pend1}:v1` },
      { kind: 'evict', payload: { jobId: ID.runA, preemptorJobId: ID.pend1 }, status: 'pending', dedupe_key: `evict:${ID.runA}:v1` },
      { kind: 'notify', payload: { jobId: ID.runA, event: 'requeued' }, status: 'pending', dedupe_key: `notify:requeued:${ID.runA}:v1` },
    ]);
    // The relay gets them in catalogue order: evictions before the binds that wait for them.
    const [bind, evict, notify] = outbox.map(({ id, kind }) => ({ id, kind }));
    expect(outcome.outbox).toEqual([evict, bind, notify]);
    expect(await rows(`SELECT number::int, leader, fencing_token::text, duration_ms, considered, admitted, preempted, reserved, pending FROM scheduler_cycles`)).toEqual([
      { number: 7, leader: 'sched-1', fencing_token: token.toString(), duration_ms: 12, considered: 3, admitted: 1, preempted: 1, reserved: 1, pending: 2 },
    ]);
    expect(await nextCycleNumber(db)).toBe(8);

    // What the next cycle sees: pend-1 holds gpu-a, run-a waits again, first in line (it keeps its submission time).
    const next = await loadSnapshot(db, NOW + 1, DEFAULT_OPTIONS);
    expect(next.running.map((j) => [j.id, j.placement.length, j.admittedAt, j.preempted])).toEqual([
      [ID.runB, 2, T0 + 3000, undefined],
      [ID.pend1, 2, NOW, [ID.runA]],
    ]);
    expect(next.pending.map((j) => [j.id, j.queuedAt])).toEqual([[ID.runA, NOW], [ID.pend2, T0 + 9000], [ID.pend3, T0 + 7000]]);
  });

  it('keeps when a job was last preempted, and gives it to the core once the job runs again (no thrashing)', async () => {
    const token = await lead();
    await commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1' });
    expect(await rows(`SELECT id::text, last_preempted_at FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id`, [[ID.runA, ID.pend1]])).toEqual([
      { id: ID.pend1, last_preempted_at: null },
      { id: ID.runA, last_preempted_at: new Date(NOW) },
    ]);
    // run-a is admitted again a minute later on a new node.
    await db.prisma.node.create({ data: { name: 'gpu-c', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, zone: 'z1' } });
    const again: CycleResult = {
      admissions: [
        { jobId: ID.runA, team: 'nlp', flavor: 'h100-80gb', replicas: 1, borrowed: 0, preempts: [],
          placement: [{ replica: 0, node: 'gpu-c', accelerators: 8, cpuMillis: 8000, memoryMiB: 65536 }] },
      ],
      preemptions: [],
      reservations: [],
      pending: [],
      stats: { considered: 1, admitted: 1, preempted: 0, reserved: 0 },
    };
    await commitCycle(db, { result: again, now: NOW + 60_000, fencing: { leaseName: LEASE, token }, cycleNumber: 2, leader: 'sched-1' });
    const next = await loadSnapshot(db, NOW + 61_000, DEFAULT_OPTIONS);
    expect(next.running.find((j) => j.id === ID.runA)).toMatchObject({ admittedAt: NOW + 60_000, lastPreemptedAt: NOW });
    expect(next.running.find((j) => j.id === ID.runB)?.lastPreemptedAt).toBeUndefined();
  });

  it('writes a pending event only when a job’s pending code changes', async () => {
    const token = await lead();
    const onlyPending: CycleResult = { ...RESULT, admissions: [], preemptions: [], stats: { considered: 3, admitted: 0, preempted: 0, reserved: 1 } };
    await commitCycle(db, { result: onlyPending, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1' });
    await commitCycle(db, { result: onlyPending, now: NOW + 1000, fencing: { leaseName: LEASE, token }, cycleNumber: 2, leader: 'sched-1' });
    const changed: CycleResult = { ...onlyPending, pending: [{ ...RESULT.pending[0]!, code: 'COHORT_EXHAUSTED', message: 'cohort research has 0 idle' }, RESULT.pending[1]!] };
    await commitCycle(db, { result: changed, now: NOW + 2000, fencing: { leaseName: LEASE, token }, cycleNumber: 3, leader: 'sched-1' });
    expect(await rows(`SELECT job_id::text, data->>'code' AS code, data->>'previousCode' AS previous FROM events ORDER BY id`)).toEqual([
      { job_id: ID.pend3, code: 'INSUFFICIENT_CAPACITY', previous: null },
      { job_id: ID.pend2, code: 'INSUFFICIENT_CAPACITY', previous: null },
      { job_id: ID.pend3, code: 'COHORT_EXHAUSTED', previous: 'INSUFFICIENT_CAPACITY' },
    ]);
  });

  it('rejects a stale fencing token and writes nothing', async () => {
    const old = await lead('sched-1');
    await releaseLease(db, LEASE, 'sched-1');
    const fresh = await lead('sched-2');
    expect(fresh).toBe(old + 1n);
    const before = await fingerprint(db);
    const attempt = commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token: old }, cycleNumber: 1, leader: 'sched-1' });
    await expect(attempt).rejects.toBeInstanceOf(FencingError);
    await expect(attempt).rejects.toMatchObject({ code: 'FENCING_TOKEN_STALE', expectedToken: old, actual: { holder: 'sched-2', fencingToken: fresh } });
    expect(await fingerprint(db)).toBe(before);
  });

  it('rejects a commit when there is no lease at all', async () => {
    const before = await fingerprint(db);
    await expect(
      commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token: 1n }, cycleNumber: 1, leader: 'x' }),
    ).rejects.toMatchObject({ code: 'FENCING_TOKEN_STALE', actual: null });
    expect(await fingerprint(db)).toBe(before);
  });

  it('rolls everything back when one write fails (an allocation on an unknown node)', async () => {
    const token = await lead();
    const before = await fingerprint(db);
    const broken: CycleResult = {
      ...RESULT,
      admissions: [{ ...RESULT.admissions[0]!, placement: RESULT.admissions[0]!.placement.map((p, i) => (i === 1 ? { ...p, node: 'no-such-node' } : p)) }],
    };
    await expect(commitCycle(db, { result: broken, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1' })).rejects.toThrow(/allocations_node_fkey/);
    expect(await fingerprint(db)).toBe(before);
  });

  it('refuses a malformed result before touching the database', async () => {
    const token = await lead();
    const before = await fingerprint(db);
    const twoPlacementsForThree: CycleResult = { ...RESULT, admissions: [{ ...RESULT.admissions[0]!, replicas: 3 }] };
    await expect(
      commitCycle(db, { result: twoPlacementsForThree, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1' }),
    ).rejects.toThrow(InvalidCycleResultError);
    expect(await fingerprint(db)).toBe(before);
  });

  it('skips an admission whose job moved on since the snapshot, and the preemptions made for it', async () => {
    const token = await lead();
    const { versions } = await loadSnapshotWithVersions(db, NOW, DEFAULT_OPTIONS);
    await moveJobs(db.pool, [{ jobId: ID.pend1, to: 'CANCELLED', reason: 'cancelled meanwhile' }], { actor: 'test' });
    const outcome = await commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1', versions });
    expect(outcome.admitted).toEqual([]);
    expect(outcome.preempted).toEqual([]);
    expect(outcome.skipped.map((s) => s.jobId)).toEqual([ID.pend1, ID.runA]);
    expect(await rows(`SELECT state::text FROM jobs WHERE id = $1`, [ID.runA])).toEqual([{ state: 'RUNNING' }]);
    expect(await rows(`SELECT count(*)::int AS n FROM allocations WHERE job_id = $1`, [ID.runA])).toEqual([{ n: 1 }]);
    expect(await rows(`SELECT count(*)::int AS n FROM outbox`)).toEqual([{ n: 0 }]);
    // The queue part of the cycle is still written.
    expect(await rows(`SELECT pending_position FROM jobs WHERE id = $1`, [ID.pend3])).toEqual([{ pending_position: 1 }]);
  });

  it('skips an admission whose job version changed even though it is still PENDING', async () => {
    const token = await lead();
    const { versions } = await loadSnapshotWithVersions(db, NOW, DEFAULT_OPTIONS);
    await db.pool.query(`UPDATE jobs SET priority = 1, version = version + 1 WHERE id = $1`, [ID.pend1]);
    const outcome = await commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1', versions });
    expect(outcome.admitted).toEqual([]);
    expect(await rows(`SELECT state::text FROM jobs WHERE id = $1`, [ID.pend1])).toEqual([{ state: 'PENDING' }]);
  });

  it('round-trips a cycle of the real core: load → runCycle → commit → load', async () => {
    // Room for pend-1 (2 × 4 h100 in one zone): a free node in z1 and quota for team vision.
    await db.prisma.node.create({ data: { name: 'gpu-c', flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, zone: 'z1' } });
    await db.prisma.quota.update({ where: { team_flavor: { team: 'vision', flavor: 'h100-80gb' } }, data: { nominal: 16 } });
    const token = await lead();
    const snapshot = await loadSnapshot(db, NOW, DEFAULT_OPTIONS);
    const result = runCycle(snapshot);
    expect(checkInvariants(snapshot, result)).toEqual([]);
    expect(result.admissions.map((a) => a.jobId)).toContain(ID.pend1);
    const outcome = await commitCycle(db, { result, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'sched-1' });
    expect(outcome.admitted).toEqual(result.admissions.map((a) => a.jobId));
    expect(outcome.preempted).toEqual(result.preemptions.map((p) => p.victimJobId));
    const after = await loadSnapshot(db, NOW + 1, DEFAULT_OPTIONS);
    for (const a of result.admissions) {
      const running = after.running.find((j) => j.id === a.jobId);
      expect(running?.placement).toEqual(a.placement);
      expect(running?.flavor).toBe(a.flavor);
    }
    const left = new Set(after.pending.map((j) => j.id));
    for (const p of result.pending) expect(left.has(p.jobId)).toBe(true);
  });
});

describe('acquireOrRenewLease', () => {
  it('grants a free lease with token 1, renews without changing the token, refuses a second holder', async () => {
    const first = await acquireOrRenewLease(db, LEASE, 'a', 60_000);
    expect(first).toMatchObject({ held: true, holder: 'a', fencingToken: 1n });
    const renewed = await acquireOrRenewLease(db, LEASE, 'a', 60_000);
    expect(renewed).toMatchObject({ held: true, holder: 'a', fencingToken: 1n });
    expect(renewed.expiresAt.getTime()).toBeGreaterThanOrEqual(first.expiresAt.getTime());
    expect(await acquireOrRenewLease(db, LEASE, 'b', 60_000)).toMatchObject({ held: false, holder: 'a', fencingToken: 1n });
  });

  it('lets another holder take an expired lease, incrementing the token; the old holder is then refused', async () => {
    await acquireOrRenewLease(db, LEASE, 'a', 1);
    await db.pool.query(`SELECT pg_sleep(0.02)`); // let the 1 ms lease expire on the database clock
    expect(await acquireOrRenewLease(db, LEASE, 'b', 60_000)).toMatchObject({ held: true, holder: 'b', fencingToken: 2n });
    expect(await acquireOrRenewLease(db, LEASE, 'a', 60_000)).toMatchObject({ held: false, holder: 'b', fencingToken: 2n });
    await releaseLease(db, LEASE, 'b');
    expect(await acquireOrRenewLease(db, LEASE, 'a', 60_000)).toMatchObject({ held: true, holder: 'a', fencingToken: 3n });
  });

  it('a fenced write in flight holds up a takeover, not its holder\'s renewals; the deposed holder\'s next write is refused', async () => {
    const { fencingToken: token } = await acquireOrRenewLease(db, LEASE, 'a', 60_000);
    const fenced = await db.pool.connect();
    try {
      await fenced.query('BEGIN');
      await assertFencing(fenced, { leaseName: LEASE, token }); // what a commit or a reconcile does first
      const pid = (await fenced.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // The holder renews while its write is in flight (it used to wait for it, and lose the lease).
      expect(await acquireOrRenewLease(db, LEASE, 'a', 60_000)).toMatchObject({ held: true, holder: 'a', fencingToken: token });

      // The lease expires (a paused holder): a standby's takeover waits for the write to end.
      await db.pool.query(`UPDATE scheduler_leases SET expires_at = now() - interval '1 second' WHERE name = $1`, [LEASE]);
      let tookOver = false;
      const takeover = acquireOrRenewLease(db, LEASE, 'b', 60_000).finally(() => (tookOver = true));
      for (;;) {
        const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        if (rows[0]!.n > 0) break;
        expect(tookOver).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(tookOver).toBe(false);
      await fenced.query('COMMIT');
      expect(await takeover).toMatchObject({ held: true, holder: 'b', fencingToken: token + 1n });
    } finally {
      fenced.release();
    }
    await expect(commitCycle(db, { result: RESULT, now: NOW, fencing: { leaseName: LEASE, token }, cycleNumber: 1, leader: 'a' })).rejects.toMatchObject({
      code: 'FENCING_TOKEN_STALE',
      actual: { holder: 'b', fencingToken: token + 1n },
    });
  }, 20_000);

  it('rejects a bad ttl or holder', async () => {
    await expect(acquireOrRenewLease(db, LEASE, '', 1000)).rejects.toThrow('holder');
    await expect(acquireOrRenewLease(db, LEASE, 'a', 0)).rejects.toThrow('ttlMs');
  });
});

describe('pruneHistory', () => {
  it('deletes done outbox entries and cycle rows past retention, keeping pending/failed entries and the last cycle', async () => {
    await db.pool.query(
      `INSERT INTO outbox (kind, payload, status, dedupe_key, done_at) VALUES
         ('bind', '{}', 'done', 'old-done', $1), ('bind', '{}', 'done', 'new-done', $2),
         ('bind', '{}', 'failed', 'old-failed', NULL), ('bind', '{}', 'pending', 'old-pending', NULL)`,
      [new Date(NOW - 10 * 86_400_000), new Date(NOW - 1000)],
    );
    await db.pool.query(
      `INSERT INTO scheduler_cycles (number, leader, fencing_token, started_at, duration_ms, admitted, preempted, pending)
       VALUES (1, 'a', 1, $1, 1, 0, 0, 0), (2, 'a', 1, $1, 1, 0, 0, 0), (3, 'a', 1, $2, 1, 0, 0, 0), (4, 'a', 1, $1, 1, 0, 0, 0)`,
      [new Date(NOW - 10 * 86_400_000), new Date(NOW - 1000)],
    );
    const pruned = await pruneHistory(db, { now: NOW, outboxDoneRetentionMs: 86_400_000, cycleRetentionMs: 86_400_000 });
    expect(pruned).toEqual({ outbox: 1, cycles: 2 });
    expect(await rows(`SELECT dedupe_key FROM outbox ORDER BY id`)).toEqual([{ dedupe_key: 'new-done' }, { dedupe_key: 'old-failed' }, { dedupe_key: 'old-pending' }]);
    expect(await rows(`SELECT number::int FROM scheduler_cycles ORDER BY id`)).toEqual([{ number: 3 }, { number: 4 }]);
    expect(await nextCycleNumber(db)).toBe(5);
  });
});
