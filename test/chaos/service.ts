import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '#db';
import { FaultProxy } from '../support/fault-proxy.js';
import { spawnRole, type RoleProcess } from '../integration/scheduler/processes.js';

// A database per file, a child process started from the sources: seconds on a busy machine (not a timing assertion).
jest.setTimeout(180_000);

export const ADMIN_TOKEN = 'chaos-admin-token-0123456789abcdef';
const POSTGRES = { host: '127.0.0.1', port: 5432 };
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

export interface Reply {
  status: number;
  contentType: string;
  retryAfter: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
}

/**
 * The real service (`npm start`'s entry point: API, scheduler and worker in one process) over its own
 * database, with Postgres and Redis each behind a FaultProxy, and a direct pg pool for assertions.
 */
export interface ChaosService {
  api: string;
  proc: RoleProcess;
  db: TestDatabase;
  pg: pg.Pool;
  postgres: FaultProxy;
  redis: FaultProxy;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** True while the child process is running. */
  alive(): boolean;
  /** The last of the process's stderr (why it died). */
  stderr(): string;
  close(): Promise<void>;
}

export async function startChaosService(label: string, env: Record<string, string> = {}): Promise<ChaosService> {
  const db = await createTestDatabase({ label });
  const postgres = await FaultProxy.start(POSTGRES);
  const redisTarget = new URL(REDIS_URL);
  const redis = await FaultProxy.start({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  const proc = spawnRole('all', {
    DATABASE_URL: postgres.via(db.url),
    REDIS_URL: redis.via(REDIS_URL),
    QM_ADMIN_TOKEN: ADMIN_TOKEN,
    QM_REDIS_PREFIX: `qm-chaos-${label}-${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
    QM_LEASE_TTL_MS: '1500',
    QM_LEASE_RENEW_MS: '300',
    QM_CYCLE_DEBOUNCE_MS: '5',
    QM_CYCLE_TICK_MS: '200',
    QM_RECONCILE_EVERY_MS: '500',
    QM_SIDE_EFFECT_BACKOFF_MS: '20',
    QM_TOKEN_CACHE_TTL_MS: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  let stderr = '';
  proc.child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on('error', () => undefined);
  const close = async (): Promise<void> => {
    await proc.kill('SIGKILL');
    await pool.end();
    await postgres.close();
    await redis.close();
    await db.drop();
  };
  let api: string;
  try {
    await proc.ready;
    api = await apiUrl(proc);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    api,
    proc,
    db,
    pg: pool,
    postgres,
    redis,
    async request(method, path, body, headers = {}) {
      const all: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers };
      if (body !== undefined) all['content-type'] ??= 'application/json';
      const res = await fetch(`${api}${path}`, { method, headers: all, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'), body: parsed };
    },
    alive: () => proc.child.exitCode === null && proc.child.signalCode === null,
    stderr: () => stderr,
    close,
  };
}

async function apiUrl(proc: RoleProcess): Promise<string> {
  for (;;) {
    const line = proc.lines.find((l) => l['msg'] === 'quartermaster API listening');
    if (line) return line['url'] as string;
    if (proc.child.exitCode !== null) throw new Error(`service exited (${proc.child.exitCode})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Fails with the process's last words unless it is still running. */
export function expectAlive(s: ChaosService): void {
  if (!s.alive()) throw new Error(`the service process exited (${String(s.proc.child.exitCode ?? s.proc.child.signalCode)}): ${s.stderr()}`);
}

/** Waits until `condition()` holds (checked every `everyMs`); throws with `what` after `timeoutMs`. */
export async function until(what: string, condition: () => boolean, timeoutMs = 60_000, everyMs = 10): Promise<void> {
  await waitFor(what, () => Promise.resolve(condition()), timeoutMs, everyMs);
}

/** Polls `probe` until it returns a truthy value; throws with `what` after `timeoutMs`. Not a timing assertion. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A small tenancy: team vision with 16 h100-80gb of quota and two 8-accelerator nodes. */
export async function seed(s: ChaosService): Promise<void> {
  const ok = async (method: string, path: string, body: unknown): Promise<void> => {
    const r = await s.request(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  };
  await ok('PUT', '/v1/cohorts/research', { description: 'research pool' });
  await ok('PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 2, costPerHour: 4 });
  await ok('PUT', '/v1/teams/vision', { cohort: 'research' });
  await ok('PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: null });
  await ok('PUT', '/v1/nodes/gpu-1', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 });
  await ok('PUT', '/v1/nodes/gpu-2', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 });
}

export function jobBody(name: string): Record<string, unknown> {
  return {
    name,
    team: 'vision',
    kind: 'training',
    priority: 100,
    replicas: 1,
    acceleratorsPerReplica: 8,
    flavors: ['h100-80gb'],
    template: { image: 'ghcr.io/acme/llama:1', command: ['python', 'train.py'], cpuMillis: 8000, memoryMiB: 65536 },
  };
}
