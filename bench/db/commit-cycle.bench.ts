// `npm run bench:db`: cost of the scheduler's database hot paths at fleet scale, printed as JSON.
//
// World: ADMISSIONS pending gangs (REPLICAS × ACCELERATORS each) that all fit, plus WAITING jobs that stay
// pending (with reasons, positions, some reservations), on NODES nodes of 8 accelerators.
// Measured: loadSnapshot before the cycle, commitCycle of the whole result (one transaction), and
// loadSnapshot after (ADMISSIONS running gangs with allocations), an unchanged cycle, and a cycle of 100 more
// admissions that shifts every waiting job's position (with how many of those row updates were HOT).
// Env: ADMISSIONS, WAITING, RUNS.
import { performance } from 'node:perf_hooks';
import type { CycleResult, SchedulerOptions } from '#core';
import pg from 'pg';
import { commitCycle } from '../../libs/db/src/scheduling/commit-cycle.js';
import { acquireOrRenewLease } from '../../libs/db/src/scheduling/lease.js';
import { loadSnapshot } from '../../libs/db/src/scheduling/load-snapshot.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const ADMISSIONS = Number(process.env['ADMISSIONS'] ?? 5000);
const WAITING = Number(process.env['WAITING'] ?? 10000);
const RUNS = Number(process.env['RUNS'] ?? 3);
const REPLICAS = 2;
const ACCELERATORS = 4;
const NODES = Math.ceil((ADMISSIONS * REPLICAS * ACCELERATORS) / 8);
const OPTIONS: SchedulerOptions = {
  preemption: true, minRuntimeBeforePreemptionSeconds: 0, backfill: true, reservationDepth: 4,
  defaultExpectedRuntimeSeconds: 3600, maxAdmissionsPerTeamPerCycle: null,
};

async function seed(pool: pg.Pool): Promise<void> {
  await pool.query(`INSERT INTO flavors (name, kind, resource_name) VALUES ('h100-80gb', 'nvidia-gpu', 'nvidia.com/gpu')`);
  await pool.query(`INSERT INTO teams (name) SELECT 'team-' || t FROM generate_series(0, 99) t`);
  await pool.query(`INSERT INTO quotas (team, flavor, nominal) SELECT 'team-' || t, 'h100-80gb', 100000 FROM generate_series(0, 99) t`);
  await pool.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone, block)
     SELECT 'node-' || n, 'h100-80gb', 8, 96000, 1048576, 'z' || (n % 4), 'b' || (n % 64) FROM generate_series(0, $1 - 1) n`,
    [NODES],
  );
  await pool.query(
    `INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, cpu_millis_per_replica,
                       memory_mib_per_replica, flavors, template, created_by, submitted_at, queued_at)
     SELECT 'job-' || n, 'team-' || (n % 100), 'training', $2, $2, $3, 1000, 1024, ARRAY['h100-80gb'], '{}', 'bench',
            timestamptz '2026-01-01' + n * interval '1 ms', timestamptz '2026-01-01' + n * interval '1 ms'
     FROM generate_series(0, $1 - 1) n`,
    [ADMISSIONS + WAITING, REPLICAS, ACCELERATORS],
  );
}

function decide(pendingIds: string[], now: number): CycleResult {
  const admitted = pendingIds.slice(0, ADMISSIONS);
  const waiting = pendingIds.slice(ADMISSIONS);
  let slot = 0;
  const admissions = admitted.map((jobId, i) => ({
    jobId,
    team: `team-${i % 100}`,
    flavor: 'h100-80gb',
    replicas: REPLICAS,
    borrowed: 0,
    preempts: [],
    placement: Array.from({ length: REPLICAS }, (_, replica) => {
      const node = `node-${Math.floor(slot / (8 / ACCELERATORS))}`;
      slot++;
      return { replica, node, accelerators: ACCELERATORS, cpuMillis: 1000, memoryMiB: 1024 };
    }),
  }));
  const reservations = waiting.slice(0, 4).map((jobId) => ({ jobId, flavor: 'h100-80gb', startAt: now + 3_600_000, nodes: [{ node: 'node-0', accelerators: 8 }] }));
  const pending = waiting.map((jobId, i) => ({
    jobId,
    code: 'INSUFFICIENT_CAPACITY' as const,
    message: `needs ${REPLICAS * ACCELERATORS} h100-80gb, 0 free`,
    position: i + 1,
    estimatedStartAt: i < 4 ? now + 3_600_000 : null,
  }));
  return { admissions, preemptions: [], reservations, pending, stats: { considered: pendingIds.length, admitted: admissions.length, preempted: 0, reserved: reservations.length } };
}

/** Admits the first `count` of `queue` on nodes after the `used` gangs already placed; the rest wait, positions 1… */
function decideFrom(queue: string[], count: number, used: number): CycleResult {
  let slot = used * REPLICAS;
  const admissions = queue.slice(0, count).map((jobId, i) => ({
    jobId, team: `team-${i % 100}`, flavor: 'h100-80gb', replicas: REPLICAS, borrowed: 0, preempts: [],
    placement: Array.from({ length: REPLICAS }, (_, replica) => ({
      replica, node: `node-${Math.floor(slot++ / (8 / ACCELERATORS)) % NODES}`, accelerators: ACCELERATORS, cpuMillis: 1000, memoryMiB: 1024,
    })),
  }));
  const pending = queue.slice(count).map((jobId, i) => ({
    jobId, code: 'INSUFFICIENT_CAPACITY' as const, message: `needs ${REPLICAS * ACCELERATORS} h100-80gb, 0 free`, position: i + 1, estimatedStartAt: null,
  }));
  return { admissions, preemptions: [], reservations: [], pending, stats: { considered: queue.length, admitted: count, preempted: 0, reserved: 0 } };
}

async function hotUpdates(pool: pg.Pool): Promise<{ upd: number; hot: number }> {
  await pool.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await pool.query<{ upd: string; hot: string }>(
    `SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables WHERE relname = 'jobs'`,
  );
  return { upd: Number(rows[0]?.upd ?? 0), hot: Number(rows[0]?.hot ?? 0) };
}

async function run(): Promise<Record<string, number>> {
  const testDb = await createTestDatabase({ label: 'bench' });
  const pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  pool.on('error', () => undefined); // the database is dropped WITH (FORCE) right after pool.end()
  try {
    await seed(pool);
    await pool.query('ANALYZE');
    const db = { pool };
    const now = Date.parse('2026-01-02T00:00:00Z');
    let t = performance.now();
    const before = await loadSnapshot(db, now, OPTIONS);
    const loadBeforeMs = performance.now() - t;
    const result = decide(before.pending.map((j) => j.id), now);
    const lease = await acquireOrRenewLease(db, 'scheduler', 'bench', 60_000);
    t = performance.now();
    const outcome = await commitCycle(db, { result, now, fencing: { leaseName: 'scheduler', token: lease.fencingToken }, cycleNumber: 1, leader: 'bench' });
    const commitMs = performance.now() - t;
    if (outcome.admitted.length !== ADMISSIONS) throw new Error(`admitted ${outcome.admitted.length} of ${ADMISSIONS}`);
    t = performance.now();
    const after = await loadSnapshot(db, now + 1, OPTIONS);
    const loadAfterMs = performance.now() - t;
    // A steady-state cycle: same queue, nothing admitted, reasons unchanged (no rows rewritten).
    const idle: CycleResult = { ...result, admissions: [], stats: { ...result.stats, admitted: 0 } };
    t = performance.now();
    await commitCycle(db, { result: idle, now: now + 2, fencing: { leaseName: 'scheduler', token: lease.fencingToken }, cycleNumber: 2, leader: 'bench' });
    const idleCommitMs = performance.now() - t;
    // A busy steady-state cycle: 100 more admissions, so every waiting job's position shifts (all rewritten).
    const queue = after.pending.map((j) => j.id);
    const shift = decideFrom(queue, 100, after.running.length);
    const hotBefore = await hotUpdates(pool);
    t = performance.now();
    await commitCycle(db, { result: shift, now: now + 3, fencing: { leaseName: 'scheduler', token: lease.fencingToken }, cycleNumber: 3, leader: 'bench' });
    const shiftCommitMs = performance.now() - t;
    const hotAfter = await hotUpdates(pool);
    return {
      shiftCommitMs,
      shiftRowsUpdated: hotAfter.upd - hotBefore.upd,
      shiftHotUpdates: hotAfter.hot - hotBefore.hot,
      loadSnapshotMs: loadBeforeMs,
      commitMs,
      idleCommitMs,
      loadSnapshotAfterMs: loadAfterMs,
      running: after.running.length,
      pending: after.pending.length,
    };
  } finally {
    await pool.end();
    await testDb.drop();
  }
}

const samples: Record<string, number>[] = [];
for (let i = 0; i < RUNS; i++) samples.push(await run());
const median = (key: string): number => {
  const values = samples.map((s) => s[key]!).sort((a, b) => a - b);
  return Math.round(values[Math.floor(values.length / 2)]! * 10) / 10;
};
console.log(
  JSON.stringify(
    {
      bench: 'db.commit-cycle',
      world: { admissions: ADMISSIONS, replicasPerAdmission: REPLICAS, allocations: ADMISSIONS * REPLICAS, waiting: WAITING, nodes: NODES },
      runs: RUNS,
      medianMs: {
        loadSnapshot: median('loadSnapshotMs'),
        commitCycle: median('commitMs'),
        commitCycleSteadyState: median('idleCommitMs'),
        loadSnapshotAfter: median('loadSnapshotAfterMs'),
        commitCycle100AdmissionsQueueShift: median('shiftCommitMs'),
      },
      samples,
    },
    null,
    2,
  ),
);
