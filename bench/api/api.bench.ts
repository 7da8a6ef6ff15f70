// `npm run bench:api`: job submissions per second through the built service, against the physical
// reference of the same Postgres (single-row INSERT transactions per second with pg), printed as JSON.
//
// 1. a fresh database (migrated), the built API started as a child process on a free port;
// 2. a tenancy (team, flavor, quota) through the API, and a member token;
// 3. autocannon: POST /v1/jobs, authenticated, each request with a unique Idempotency-Key, for DURATION s
//    with CONNECTIONS connections; every 201 is checked to be persisted (row count);
// 4. the reference: CONNECTIONS pg clients doing single-row INSERT … autocommit for REF_DURATION s.
// Env: DURATION (10), REF_DURATION (5), CONNECTIONS (32), WARMUP (2).
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { call, freePort, startApiProcess } from './api-process.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const REF_DURATION = Number(process.env['REF_DURATION'] ?? 5);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 32);
const WARMUP = Number(process.env['WARMUP'] ?? 2);
const ADMIN = `bench-admin-${randomUUID()}`;

/** CPU time (user + system) of a process so far, from /proc (Linux). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}


const JOB = JSON.stringify({
  name: 'bench-job',
  team: 'vision',
  kind: 'training',
  priorityClass: 'standard',
  replicas: 4,
  acceleratorsPerReplica: 8,
  flavors: ['h100-80gb', 'a100-80gb'],
  topology: { level: 'block' },
  expectedRuntimeSeconds: 3600,
  template: { image: 'ghcr.io/acme/llama:1', command: ['python', 'train.py'], env: { EPOCHS: '3' }, cpuMillis: 8000, memoryMiB: 65536 },
});

async function submissions(base: string, token: string, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url: `${base}/v1/jobs`,
    connections: CONNECTIONS,
    duration,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JOB,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }],
  });
}

async function rawInserts(url: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS });
  pool.on('error', () => undefined);
  await pool.query('CREATE TABLE bench_raw (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), team text NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  let done = 0;
  const end = performance.now() + REF_DURATION * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await pool.query('INSERT INTO bench_raw (team, body) VALUES ($1, $2::jsonb)', ['vision', JOB]);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.end();
  return done / seconds;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ label: 'bench_api' });
  let child: ChildProcess | undefined;
  try {
    const port = await freePort();
    child = await startApiProcess(db.url, port, ADMIN);
    const base = `http://127.0.0.1:${port}`;
    await call(base, ADMIN, 'PUT', '/v1/cohorts/research', {});
    await call(base, ADMIN, 'PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu' });
    await call(base, ADMIN, 'PUT', '/v1/flavors/a100-80gb', { kind: 'nvidia-gpu' });
    // Members choose a priority class (a number is for admins): each submission reads the classes.
    await call(base, ADMIN, 'PUT', '/v1/priority-classes/standard', { value: 10, default: true });
    // The bench measures the API's own ceiling: the team's submission limits are set far above it (the defaults, 200/s, would refuse most).
    await call(base, ADMIN, 'PUT', '/v1/teams/vision', { cohort: 'research', limits: { maxPendingJobs: 10_000_000, submissionsPerSecond: 1_000_000 } });
    await call(base, ADMIN, 'PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 64 });
    const { token } = (await call(base, ADMIN, 'POST', '/v1/tokens', { subject: 'bench', role: 'member', teams: ['vision'] })) as { token: string };

    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on('error', () => undefined);
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1000)); // let requests in flight land
    if (WARMUP > 0) await submissions(base, token, WARMUP);
    await settle();
    const before = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0]!.n);
    const cpuBefore = cpuMs(child.pid!);
    const result = await submissions(base, token, DURATION);
    const serviceCpuMs = cpuMs(child.pid!) - cpuBefore;
    await settle();
    const after = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0]!.n);
    await pool.end();
    const created = result['2xx'];
    // Requests still in flight when autocannon stops are stored but not counted: at most one per connection.
    const stored = after - before;
    if (stored < created || stored > created + CONNECTIONS) throw new Error(`${created} submissions answered 2xx but ${stored} jobs were stored`);
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors during the run`);
    const submitPerSec = created / DURATION;

    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    const rawInsertPerSec = await rawInserts(db.url);
    console.log(
      JSON.stringify({
        submitPerSec: Math.round(submitPerSec),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        rawInsertPerSec: Math.round(rawInsertPerSec),
        ratio: Math.round((submitPerSec / rawInsertPerSec) * 1000) / 1000,
        connections: CONNECTIONS,
        durationS: DURATION,
        jobsStored: after,
        serviceCpuMsPerSubmit: Math.round((serviceCpuMs / Math.max(1, created)) * 1000) / 1000,
        loadAverage: loadavg()[0],
      }),
    );
  } finally {
    if (child) child.kill('SIGTERM');
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
