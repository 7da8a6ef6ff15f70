// npm run bench:e2e — the whole service in standalone mode (API + scheduler + worker, one process),
// a fleet of nodes, jobs submitted over REST. Prints one JSON line per scenario.
//
//   burst   5,000 single-GPU jobs submitted at once (target: all admitted within 5 s)
//   steady  200 jobs/s for 60 s, executors finishing each job ~2 s after admission (target: p99 ≤ 1 s)
//   drain   10,000 single-accelerator jobs already pending in Postgres, 5,000 nodes, two teams: from the
//           service's spawn, from its being ready, and from its first cycle to every decision committed
//           (decisions committed per second; issue #15)
//   latency +200 ms each way on the service's Postgres link (test/support/fault-proxy.ts): 1,000 jobs
//           appear pending at once (250 nodes); the wall time of the cycle that commits them, with the
//           incremental snapshot and with a full read every cycle (QM_SNAPSHOT_FULL_RELOAD_MS=0) (issue #15)
//   outage  Postgres reset / black-holed and Redis refused / black-holed behind FaultProxies: time to 503,
//           recovery after Postgres returns, side effects flowing after Redis returns (outage.ts; issue #11)
//
// Admission time of a job = when the cycle that admitted it had committed (its "cycle committed" log
// line; the cycle number is in the job's `job.admitted` event); submission time = `jobs.submitted_at`.
// Same machine, same clock. Extra figures: submitSeconds (how long the client took to submit them
// all), submitToAckP99Ms (until the `bind` side effect was done by a worker), loadAverage (of the host).
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { dropDatabase, ensureDatabase, migrateDatabase } from '#db';
import { call, closeClient, mustCall, pool } from './client.js';
import { finishAdmitted } from './executor.js';
import { FaultProxy } from '../../test/support/fault-proxy.js';
import { outage } from './outage.js';
import { startService, type Service } from './service.js';

const SERVER = process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/quartermaster';
const TOKEN = `bench-${randomBytes(12).toString('hex')}`;
const FLAVOR = 'h100-80gb';
const TEAM = 'bench';

interface Figures {
  scenario: string;
  jobs: number;
  admitSeconds: number;
  admittedPerSec: number;
  submitToAdmitP50Ms: number;
  submitToAdmitP99Ms: number;
  cycleP99Ms: number;
  submitSeconds: number;
  submitToAckP99Ms: number;
  cycles: number;
  /** Jobs admitted by the end (less than `jobs` when the service fell behind and the wait timed out). */
  admitted: number;
  loadAverage: number;
}

function databaseUrl(name: string): string {
  const u = new URL(SERVER);
  u.pathname = `/${name}`;
  return u.toString();
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function seed(service: Service, nodes: number): Promise<void> {
  const b = service.url;
  await mustCall(b, 'PUT', `/v1/flavors/${FLAVOR}`, TOKEN, { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 1, costPerHour: 4 });
  await mustCall(b, 'PUT', '/v1/cohorts/bench', TOKEN, { description: 'bench' });
  // Limits set explicitly far above what the bench submits (the defaults would refuse its bursts).
  await mustCall(b, 'PUT', `/v1/teams/${TEAM}`, TOKEN, { cohort: 'bench', fairShareWeight: 1, limits: { maxPendingJobs: 10_000_000, submissionsPerSecond: 1_000_000 } });
  await mustCall(b, 'PUT', `/v1/teams/${TEAM}/quotas/${FLAVOR}`, TOKEN, { nominal: nodes * 8, borrowingLimit: null, lendingLimit: null });
  await pool(nodes, 32, async (i) => {
    await mustCall(b, 'PUT', `/v1/nodes/node-${String(i).padStart(5, '0')}`, TOKEN, {
      flavor: FLAVOR, accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: `z${i % 4}`, block: `b${i % 32}` }, schedulable: true,
    });
  });
}

function jobBody(i: number): unknown {
  return {
    name: `bench-${i}`, team: TEAM, kind: 'training', priority: 1, preemptible: true, replicas: 1, acceleratorsPerReplica: 1,
    flavors: [FLAVOR], topology: { level: 'none' }, expectedRuntimeSeconds: 60, template: { image: 'busybox', cpuMillis: 1000, memoryMiB: 1024 },
  };
}

async function submit(service: Service, i: number): Promise<void> {
  const reply = await call(service.url, 'POST', '/v1/jobs', TOKEN, jobBody(i), { 'idempotency-key': `bench-${i}` });
  if (reply.status !== 201 && reply.status !== 200) throw new Error(`POST /v1/jobs → ${reply.status}: ${reply.body.slice(0, 300)}`);
}

/** Waits until every job was admitted (its `bind` acknowledged) or the time is up; returns how many were. */
async function waitAdmitted(db: pg.Pool, jobs: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'bind' AND status = 'done'`);
    if (rows[0]!.n >= jobs || Date.now() > deadline) return rows[0]!.n;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function figures(db: pg.Pool, scenario: string, jobs: number, service: Service, cyclesBefore: number, submitSeconds: number): Promise<Figures> {
  const { rows } = await db.query<{ submitted: Date; cycle: string; acked: Date | null }>(
    `SELECT j.submitted_at AS submitted, e.data->>'cycle' AS cycle, o.done_at AS acked
     FROM jobs j
     JOIN events e ON e.job_id = j.id AND e.kind = 'job.admitted'
     LEFT JOIN outbox o ON o.kind = 'bind' AND o.payload->>'jobId' = j.id::text`,
  );
  const latencies: number[] = [];
  const acks: number[] = [];
  let first = Infinity;
  let last = 0;
  for (const r of rows) {
    const admitted = service.committedAt.get(Number(r.cycle));
    if (admitted === undefined) throw new Error(`no log line for cycle ${r.cycle}`);
    latencies.push(admitted - r.submitted.getTime());
    if (r.acked) acks.push(r.acked.getTime() - r.submitted.getTime());
    first = Math.min(first, r.submitted.getTime());
    last = Math.max(last, admitted);
  }
  latencies.sort((a, b) => a - b);
  acks.sort((a, b) => a - b);
  const admitSeconds = (last - first) / 1000;
  const cycles = service.cycleMs.slice(cyclesBefore).sort((a, b) => a - b);
  return {
    scenario,
    jobs,
    admitSeconds: round(admitSeconds),
    admittedPerSec: round(rows.length / admitSeconds),
    submitToAdmitP50Ms: round(percentile(latencies, 50)),
    submitToAdmitP99Ms: round(percentile(latencies, 99)),
    cycleP99Ms: round(percentile(cycles, 99)),
    submitSeconds: round(submitSeconds),
    submitToAckP99Ms: round(percentile(acks, 99)),
    cycles: cycles.length,
    admitted: rows.length,
    loadAverage: round(loadavg()[0]!),
  };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

/** A fresh database and service per scenario. */
async function withService(label: string, nodes: number, run: (service: Service, db: pg.Pool) => Promise<Figures>): Promise<Figures> {
  const name = `qm_bench_e2e_${label}_${Date.now().toString(36)}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  const service = await startService({ DATABASE_URL: url, QM_ADMIN_TOKEN: TOKEN, QM_REDIS_PREFIX: name, QM_DB_POOL_SIZE: '24', QM_CYCLE_DEBOUNCE_MS: '10' });
  const db = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await seed(service, nodes);
    return await run(service, db);
  } finally {
    await db.end();
    await service.stop();
    await dropDatabase(url).catch(() => undefined);
  }
}

async function burst(): Promise<Figures> {
  const jobs = 5000;
  return withService('burst', 700, async (service, db) => {
    const cyclesBefore = service.cycleMs.length;
    const t0 = Date.now();
    await pool(jobs, 128, (i) => submit(service, i));
    const submitSeconds = (Date.now() - t0) / 1000;
    await waitAdmitted(db, jobs, 120_000);
    return figures(db, 'burst', jobs, service, cyclesBefore, submitSeconds);
  });
}

async function steady(): Promise<Figures> {
  const rate = 200;
  const seconds = 60;
  const jobs = rate * seconds;
  return withService('steady', 250, async (service, db) => {
    const cyclesBefore = service.cycleMs.length;
    let stop = false;
    // Executors finish each admitted job ~2 s after admission (in Postgres; see executor.ts).
    const executor = (async () => {
      while (!stop) {
        await finishAdmitted(db, 2000);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const t0 = Date.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < jobs; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.push(submit(service, i));
    }
    await Promise.all(inFlight);
    const submitSeconds = (Date.now() - t0) / 1000;
    await waitAdmitted(db, jobs, 120_000);
    stop = true;
    await executor;
    return figures(db, 'steady', jobs, service, cyclesBefore, submitSeconds);
  });
}

interface DrainFigures {
  scenario: 'drain';
  jobs: number;
  nodes: number;
  teams: number;
  /** From the service's spawn (a new process: module loading and start-up included) to the commit of the cycle that made the last decision. */
  secondsFromSpawn: number;
  decisionsPerSecFromSpawn: number;
  /**
   * From when the service was ready — its API listening, its scheduler running — or began its first
   * cycle, whichever came first, to the last decision's commit: a started service, as YuniKorn's
   * benchmark times it. Equals secondsFromFirstCycle when the first cycle starts before the API listens.
   */
  secondsFromReady: number;
  decisionsPerSecFromReady: number;
  /** From the start of the first cycle to the commit of the last decision. */
  secondsFromFirstCycle: number;
  decisionsPerSec: number;
  /** From the spawn to the API's "listening" line, and to the start of the first cycle. */
  spawnToReadySeconds: number;
  spawnToFirstCycleSeconds: number;
  /** Phases of the first cycle (lock, snapshot, schedule, check, commit), ms. */
  firstCyclePhasesMs: Record<string, number>;
  cycles: number;
  cycleP50Ms: number;
  cycleMaxMs: number;
  admitted: number;
  loadAverage: number;
}

/** Seeds the drain world straight in Postgres: a flavor, a cohort of two teams, nodes, and pending jobs. */
async function seedDrain(db: pg.Pool, nodes: number, jobs: number, teams: string[]): Promise<void> {
  await db.query(`INSERT INTO flavors (name, kind, resource_name, memory_gib, cost_per_hour) VALUES ($1, 'nvidia-gpu', 'nvidia.com/gpu', 80, 4)`, [FLAVOR]);
  await db.query(`INSERT INTO cohorts (name) VALUES ('bench')`);
  for (const team of teams) {
    await db.query(`INSERT INTO teams (name, cohort) VALUES ($1, 'bench')`, [team]);
    await db.query(`INSERT INTO quotas (team, flavor, nominal) VALUES ($1, $2, $3)`, [team, FLAVOR, (nodes * 8) / teams.length]);
  }
  await db.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone, block)
     SELECT 'node-' || lpad(g::text, 5, '0'), $1, 8, 96000, 1048576, 'z' || (g % 4), 'b' || (g % 32) FROM generate_series(1, $2) g`,
    [FLAVOR, nodes],
  );
  await seedPending(db, jobs, teams);
}

/** `jobs` single-accelerator jobs pending at once, spread over `teams` (as submissions write them). */
async function seedPending(db: pg.Pool, jobs: number, teams: string[]): Promise<void> {
  if (jobs === 0) return;
  await db.query(
    `WITH j AS (
       INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, cpu_millis_per_replica, memory_mib_per_replica,
                         flavors, template, created_by, expected_runtime_seconds, submitted_at, queued_at)
       SELECT 'drain-' || g, ($3::text[])[1 + g % array_length($3::text[], 1)], 'training', 1, 1, 1, 1000, 1024, ARRAY[$1],
              '{"image":"busybox"}'::jsonb, 'bench', 60, now() - make_interval(secs => 1), now() - make_interval(secs => 1)
       FROM generate_series(1, $2) g
       RETURNING id, team, submitted_at
     ), t AS (
       INSERT INTO job_transitions (job_id, "from", "to", at, reason) SELECT id, NULL, 'PENDING', submitted_at, 'submitted' FROM j
     )
     INSERT INTO events (at, kind, job_id, team, actor, message) SELECT submitted_at, 'job.submitted', id, team, 'bench', 'submitted' FROM j`,
    [FLAVOR, jobs, teams],
  );
}

async function drain(): Promise<DrainFigures> {
  const jobs = 10_000;
  const nodes = 5_000;
  const teams = ['bench-a', 'bench-b'];
  const name = `qm_bench_e2e_drain_${Date.now().toString(36)}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  await migrateDatabase(url);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await seedDrain(db, nodes, jobs, teams);
    const spawnedAt = Date.now();
    const service = await startService({ DATABASE_URL: url, QM_ADMIN_TOKEN: TOKEN, QM_REDIS_PREFIX: name, QM_DB_POOL_SIZE: '24', QM_CYCLE_DEBOUNCE_MS: '10' });
    try {
      const deadline = Date.now() + 300_000;
      let admitted = 0;
      for (;;) {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE state <> 'PENDING'`);
        admitted = rows[0]!.n;
        if (admitted >= jobs || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { rows } = await db.query<{ last: string | null }>(`SELECT max((data->>'cycle')::bigint)::text AS last FROM events WHERE kind = 'job.admitted'`);
      const lastCycle = Number(rows[0]!.last);
      // The cycle's log line may trail its commit a little.
      for (let i = 0; i < 100 && !service.committedAt.has(lastCycle); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      const lastAt = service.committedAt.get(lastCycle);
      if (lastAt === undefined) throw new Error(`no log line for cycle ${lastCycle}`);
      const firstCycle = Math.min(...service.committedAt.keys());
      const firstStart = service.committedAt.get(firstCycle)! - service.cycleMs[0]!;
      const readyAt = service.firstLogAt.get('quartermaster API listening');
      if (readyAt === undefined) throw new Error('the service never logged "quartermaster API listening"');
      const cycles = [...service.cycleMs].sort((a, b) => a - b);
      const fromFirst = (lastAt - firstStart) / 1000;
      const fromSpawn = (lastAt - spawnedAt) / 1000;
      const fromReady = (lastAt - Math.min(readyAt, firstStart)) / 1000;
      return {
        scenario: 'drain',
        jobs,
        nodes,
        teams: teams.length,
        secondsFromSpawn: round(fromSpawn),
        decisionsPerSecFromSpawn: round(admitted / fromSpawn),
        secondsFromReady: round(fromReady),
        decisionsPerSecFromReady: round(admitted / fromReady),
        secondsFromFirstCycle: round(fromFirst),
        decisionsPerSec: round(admitted / fromFirst),
        spawnToReadySeconds: round((readyAt - spawnedAt) / 1000),
        spawnToFirstCycleSeconds: round((firstStart - spawnedAt) / 1000),
        firstCyclePhasesMs: Object.fromEntries(Object.entries(service.cyclePhasesMs[0] ?? {}).map(([k, v]) => [k, Math.round(v)])),
        cycles: cycles.length,
        cycleP50Ms: round(percentile(cycles, 50)),
        cycleMaxMs: round(cycles[cycles.length - 1] ?? 0),
        admitted,
        loadAverage: round(loadavg()[0]!),
      };
    } finally {
      await service.stop();
    }
  } finally {
    await db.end();
    await dropDatabase(url).catch(() => undefined);
  }
}

interface LatencyFigures {
  scenario: 'latency';
  jobs: number;
  nodes: number;
  /** Added to every chunk each way (a round trip costs twice this more). */
  latencyMs: number;
  /** The cycle that admitted the jobs, incremental snapshot (default): wall time and its phases. */
  incremental: { cycleMs: number; phasesMs: Record<string, number>; admitted: number };
  /** The same with QM_SNAPSHOT_FULL_RELOAD_MS=0 (every read full). */
  fullReads: { cycleMs: number; phasesMs: Record<string, number>; admitted: number };
  loadAverage: number;
}

/** One service behind a latency proxy; `jobs` appear pending at once; returns the cycle that admitted them. */
async function latencyRun(jobs: number, nodes: number, latencyMs: number, env: Record<string, string>): Promise<LatencyFigures['incremental']> {
  const name = `qm_bench_e2e_latency_${Date.now().toString(36)}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  await migrateDatabase(url);
  const server = new URL(SERVER);
  const proxy = await FaultProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
  const db = new pg.Pool({ connectionString: url, max: 2 });
  try {
    await seedDrain(db, nodes, 0, ['bench-a', 'bench-b']);
    const lines: { cycle: number; totalMs: number; phasesMs: Record<string, number>; admitted: number }[] = [];
    const service = await startService(
      { DATABASE_URL: proxy.via(url), QM_ADMIN_TOKEN: TOKEN, QM_REDIS_PREFIX: name, QM_DB_POOL_SIZE: '8', QM_CYCLE_TICK_MS: '500', ...env },
      (entry) => {
        if (entry['msg'] === 'cycle committed') lines.push(entry as unknown as (typeof lines)[number]);
      },
    );
    try {
      // The service is up (its connections open); now every byte to and from Postgres waits.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      proxy.latency(latencyMs);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await seedPending(db, jobs, ['bench-a', 'bench-b']);
      const deadline = Date.now() + 120_000;
      while (!lines.some((l) => l.admitted > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const cycle = lines.find((l) => l.admitted > 0);
      if (!cycle) throw new Error('no cycle admitted the jobs within 120 s');
      const rounded = Object.fromEntries(Object.entries(cycle.phasesMs).map(([k, v]) => [k, Math.round(v)]));
      return { cycleMs: Math.round(cycle.totalMs), phasesMs: rounded, admitted: cycle.admitted };
    } finally {
      proxy.heal();
      await service.stop();
    }
  } finally {
    await db.end();
    await proxy.close();
    await dropDatabase(url).catch(() => undefined);
  }
}

async function latency(): Promise<LatencyFigures> {
  const jobs = 1000;
  const nodes = 250;
  const latencyMs = 200;
  const incremental = await latencyRun(jobs, nodes, latencyMs, {});
  const fullReads = await latencyRun(jobs, nodes, latencyMs, { QM_SNAPSHOT_FULL_RELOAD_MS: '0' });
  return { scenario: 'latency', jobs, nodes, latencyMs, incremental, fullReads, loadAverage: round(loadavg()[0]!) };
}

const only = process.argv[2];
for (const [name, scenario] of [['burst', burst], ['steady', steady], ['drain', drain], ['latency', latency], ['outage', outage]] as const) {
  if (only && only !== name) continue;
  const result = await scenario();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
closeClient();
