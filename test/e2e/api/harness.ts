import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import pg from 'pg';
import { schedulerSettingsFromEnv } from '#scheduling';
import { Config } from '#common';
import { createTestDatabase, type TestDatabase } from '#db';
import { createApiApp, type ApiApp } from '../../../apps/api/src/main.js';
import { flushPrefix } from '../../support/redis-keys.js';

// Creating and migrating a database per file takes seconds on a busy machine (not a timing assertion).
jest.setTimeout(120_000);

export const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';

export interface Reply {
  status: number;
  contentType: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded) when a string. */
  raw?: string;
  headers?: Record<string, string>;
}

/** A running API on port 0 over a fresh database, plus a pg pool for assertions on the rows. */
export interface Harness {
  url: string;
  api: ApiApp;
  db: TestDatabase;
  pg: pg.Pool;
  /** Where the API publishes cycle triggers (Redis URL and this run's key prefix). */
  redisUrl: string;
  redisPrefix: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** Like request (as admin, or as `token`), but throws unless the status is 2xx; the body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  ok(method: string, path: string, body?: unknown, token?: string): Promise<any>;
  /** Row counts of the tables a request could write. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

const TABLES = ['flavors', 'cohorts', 'teams', 'quotas', 'nodes', 'jobs', 'job_transitions', 'events', 'api_tokens', 'idempotency_keys', 'allocations', 'outbox'];

export async function startHarness(label: string, env: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDatabase({ label });
  // The run's Redis (REDIS_URL, as every suite), unless a test names another.
  const config = Config.fromEnv({ QM_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', QM_TOKEN_CACHE_TTL_MS: '0', REDIS_URL: process.env['REDIS_URL'], ...env }).with({
    databaseUrl: db.url,
    port: 0,
    host: '127.0.0.1',
  });
  const scheduler = schedulerSettingsFromEnv({ ...env, QM_REDIS_PREFIX: `qm-test-${label}-${randomBytes(4).toString('hex')}` });
  let api: ApiApp;
  let url: string;
  try {
    api = await createApiApp(config, { migrate: false, scheduler });
    url = await api.listen();
  } catch (error) {
    await db.drop(); // a failed start leaves no database behind
    throw error;
  }
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // pool.end() resolves before its sockets close, so db.drop()'s FORCE can reach a closing client.
  pool.on('error', () => undefined);
  const harness: Harness = {
    url,
    api,
    db,
    pg: pool,
    redisUrl: config.redisUrl,
    redisPrefix: scheduler.redisPrefix,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      const token = options.token === undefined ? ADMIN_TOKEN : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON (the docs UI)
      }
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: parsed };
    },
    async ok(method, path, body, token) {
      const r = await harness.request(method, path, { ...(body === undefined ? {} : { body }), ...(token === undefined ? {} : { token }) });
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as unknown;
    },
    async counts() {
      const out: Record<string, number> = {};
      for (const t of TABLES) {
        const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`);
        out[t] = rows[0]!.n;
      }
      return out;
    },
    async close() {
      await pool.end();
      await api.close();
      await db.drop();
      await flushPrefix(scheduler.redisPrefix, config.redisUrl);
    },
  };
  return harness;
}

/**
 * A second API process over the harness's Postgres database and Redis key prefix: another replica. `env`
 * adds settings (QM_TOKEN_CACHE_TTL_MS is 0 unless given); `logs` collects its warnings; `redis` replaces its client.
 */
export async function replicaOf(
  h: Harness,
  options: { redis?: Redis; logs?: string[]; env?: Record<string, string> } = {},
): Promise<{ url: string; api: ApiApp }> {
  const config = Config.fromEnv({ QM_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', QM_TOKEN_CACHE_TTL_MS: '0', REDIS_URL: h.redisUrl, ...options.env }).with({
    databaseUrl: h.db.url,
    port: 0,
    host: '127.0.0.1',
  });
  const logs = options.logs;
  const logger =
    logs === undefined
      ? pino({ level: 'silent' })
      : pino(
          { level: 'warn' },
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              logs.push(chunk.toString());
              done();
            },
          }),
        );
  const api = await createApiApp(config, {
    migrate: false,
    logger,
    scheduler: schedulerSettingsFromEnv({ QM_REDIS_PREFIX: h.redisPrefix }),
    ...(options.redis === undefined ? {} : { redis: options.redis }),
  });
  return { url: await api.listen(), api };
}

/** A small tenancy: cohort research; teams vision and nlp; flavors h100-80gb and a100-80gb; quotas; one node each. */
export async function seedTenancy(h: Harness): Promise<void> {
  const ok = async (method: string, path: string, body: unknown): Promise<void> => {
    const r = await h.request(method, path, { body });
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  };
  await ok('PUT', '/v1/cohorts/research', { description: 'research pool' });
  await ok('PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 2, costPerHour: 4 });
  await ok('PUT', '/v1/flavors/a100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 1, costPerHour: 2 });
  await ok('PUT', '/v1/teams/vision', { cohort: 'research' });
  await ok('PUT', '/v1/teams/nlp', { cohort: 'research', fairShareWeight: 2 });
  await ok('PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 16, borrowingLimit: 8, lendingLimit: null });
  await ok('PUT', '/v1/teams/nlp/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: 8 });
  await ok('PUT', '/v1/nodes/gpu-1', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1', block: 'b1' } });
  await ok('PUT', '/v1/nodes/gpu-2', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1', block: 'b2' } });
}

/** A valid job body for team `team`. */
export function jobBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'llama-ft-7',
    team: 'vision',
    kind: 'training',
    replicas: 2,
    acceleratorsPerReplica: 4,
    flavors: ['h100-80gb'],
    template: { image: 'ghcr.io/acme/llama:1', command: ['python', 'train.py'], cpuMillis: 8000, memoryMiB: 65536 },
    ...overrides,
  };
}

/** Creates a member token for `teams` through the API and returns its secret. */
export async function memberToken(h: Harness, subject: string, teams: string[]): Promise<string> {
  const r = await h.request('POST', '/v1/tokens', { body: { subject, role: 'member', teams } });
  if (r.status !== 201) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.token as string;
}
