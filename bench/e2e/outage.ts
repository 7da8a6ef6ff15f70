// `npm run bench:e2e outage` — what clients see when Postgres or Redis goes away and comes back: the whole
// service (dist/apps/server/src/main.js, default timeouts) behind a FaultProxy in front of each of
// the real Postgres and Redis (test/support/fault-proxy.ts). One JSON line:
//
//   postgres.<reset|blackhole>  timeTo503Ms: from the cut to the first 503 DATABASE_UNAVAILABLE answer to a
//                               client sending GET /v1/jobs every 50 ms (requests stuck on the link count
//                               from when they were sent); recoveryMs: from the heal to the first 200;
//                               other5xx: answers ≥ 500 other than 503 (issue #11: 0). One figure per round.
//   redis.<refused|blackholed>  jobs submitted during a 10 s outage and admitted before it ended
//                               (admittedDuringOutage), and from Redis' return until every outbox entry
//                               (their side effects) was done (sideEffectsFlowMs; issue #11: within 5 s).
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { dropDatabase, ensureDatabase, migrateDatabase } from '#db';
import { FaultProxy } from '../../test/support/fault-proxy.js';
import { startService } from './service.js';

const SERVER = process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/quartermaster';
const REDIS = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const TOKEN = `bench-${randomBytes(12).toString('hex')}`;
const ROUNDS = 3;

export interface OutageFigures {
  scenario: 'outage';
  postgres: Record<'reset' | 'blackhole', { timeTo503Ms: number[]; recoveryMs: number[]; other5xx: number }>;
  redis: Record<'refused' | 'blackholed', { submitted: number; admittedDuringOutage: number; sideEffectsFlowMs: number }>;
  loadAverage: { start: number; end: number };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function send(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0; // refused, reset or aborted
  }
}

/** From now until `GET /v1/jobs` answers `want` (a request every 50 ms, each may hang): ms until the first such answer. */
async function timeUntil(base: string, want: number, other5xx: { n: number }): Promise<number> {
  const started = performance.now();
  let answeredAt: number | null = null;
  const seen = new Map<number, number>();
  const inFlight: Promise<void>[] = [];
  while (answeredAt === null && performance.now() - started < 60_000) {
    inFlight.push(
      send(base, 'GET', '/v1/jobs?limit=1').then((status) => {
        seen.set(status, (seen.get(status) ?? 0) + 1);
        if (status >= 500 && status !== 503) other5xx.n++;
        if (status === want && answeredAt === null) answeredAt = performance.now();
      }),
    );
    await sleep(50);
  }
  await Promise.all(inFlight);
  if (answeredAt === null) throw new Error(`no ${want} within 60 s (answers: ${JSON.stringify([...seen])})`);
  return Math.round(answeredAt - started);
}

export async function outage(): Promise<OutageFigures> {
  const loadStart = Math.round(loadavg()[0]! * 100) / 100;
  const name = `qm_bench_outage_${Date.now().toString(36)}`;
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await migrateDatabase(url.toString());
  const postgres = await FaultProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
  const redisUrl = new URL(REDIS);
  const redis = await FaultProxy.start({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  const db = new pg.Pool({ connectionString: url.toString(), max: 2 });
  const service = await startService({ DATABASE_URL: postgres.via(url.toString()), REDIS_URL: redis.via(REDIS), QM_ADMIN_TOKEN: TOKEN, QM_REDIS_PREFIX: name });
  try {
    const base = service.url;
    for (const [path, body] of [
      ['/v1/flavors/h100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, costPerHour: 4 }],
      ['/v1/teams/bench', { limits: { maxPendingJobs: 10_000_000, submissionsPerSecond: 1_000_000 } }],
      ['/v1/teams/bench/quotas/h100-80gb', { nominal: 64, borrowingLimit: null, lendingLimit: null }],
      ...Array.from({ length: 8 }, (_, i) => [`/v1/nodes/gpu-${i}`, { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 }] as const),
    ] as const) {
      const status = await send(base, 'PUT', path, body);
      if (status >= 300) throw new Error(`PUT ${path} → ${status}`);
    }

    const figures: OutageFigures['postgres'] = { reset: { timeTo503Ms: [], recoveryMs: [], other5xx: 0 }, blackhole: { timeTo503Ms: [], recoveryMs: [], other5xx: 0 } };
    for (const mode of ['reset', 'blackhole'] as const) {
      for (let round = 0; round < ROUNDS; round++) {
        const other = { n: 0 };
        await timeUntil(base, 200, other);
        if (mode === 'reset') postgres.reset();
        else postgres.blackhole();
        figures[mode].timeTo503Ms.push(await timeUntil(base, 503, other));
        await sleep(3000);
        postgres.heal();
        figures[mode].recoveryMs.push(await timeUntil(base, 200, other));
        figures[mode].other5xx += other.n;
      }
    }

    const redisFigures = {} as OutageFigures['redis'];
    let seq = 0;
    for (const mode of ['refused', 'blackholed'] as const) {
      await waitForOutbox(db);
      const admittedBefore = await admitted(db);
      if (mode === 'refused') redis.reset();
      else redis.blackhole();
      const cutAt = performance.now();
      const submitted = 16;
      for (let i = 0; i < submitted; i++) {
        const status = await send(base, 'POST', '/v1/jobs', job(`redis-${mode}-${seq++}`), { 'idempotency-key': `redis-${name}-${seq}` });
        if (status !== 201) throw new Error(`POST /v1/jobs during the Redis outage → ${status}`);
      }
      // Finished jobs free the nodes for the next: the executor's status reports go through the API.
      while (performance.now() - cutAt < 10_000) {
        await finishAdmitted(db, base);
        await sleep(200);
      }
      const admittedDuringOutage = (await admitted(db)) - admittedBefore;
      redis.heal();
      const healedAt = performance.now();
      await waitForOutbox(db);
      redisFigures[mode] = { submitted, admittedDuringOutage, sideEffectsFlowMs: Math.round(performance.now() - healedAt) };
    }
    return { scenario: 'outage', postgres: figures, redis: redisFigures, loadAverage: { start: loadStart, end: Math.round(loadavg()[0]! * 100) / 100 } };
  } finally {
    postgres.heal();
    redis.heal();
    await service.stop();
    await db.end();
    await postgres.close();
    await redis.close();
    await dropDatabase(url.toString()).catch(() => undefined);
  }
}

function job(name: string): Record<string, unknown> {
  return {
    name,
    team: 'bench',
    kind: 'training',
    priority: 100,
    replicas: 1,
    acceleratorsPerReplica: 8,
    flavors: ['h100-80gb'],
    template: { image: 'ghcr.io/acme/llama:1', command: ['python', 'train.py'], cpuMillis: 8000, memoryMiB: 65536 },
  };
}

async function admitted(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(DISTINCT job_id)::int AS n FROM job_transitions WHERE "to" = 'ADMITTED'`);
  return rows[0]!.n;
}

/** Reports every job holding accelerators as SUCCEEDED, through the API (as an executor does). */
async function finishAdmitted(db: pg.Pool, base: string): Promise<void> {
  const { rows } = await db.query<{ id: string }>(`SELECT id::text AS id FROM jobs WHERE state IN ('ADMITTED', 'BINDING', 'RUNNING')`);
  for (const { id } of rows) await send(base, 'POST', `/v1/jobs/${id}/status`, { state: 'SUCCEEDED', reason: 'exit code 0' });
}

/** Until no outbox entry is pending (every side effect done). */
async function waitForOutbox(db: pg.Pool): Promise<void> {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE status = 'pending'`);
    if (rows[0]!.n === 0) return;
    if (performance.now() > deadline) throw new Error(`${rows[0]!.n} outbox entries still not done after 120 s`);
    await sleep(50);
  }
}
