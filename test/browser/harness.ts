import { randomBytes } from 'node:crypto';
import { Config } from '#common';
import { createTestDatabase, type TestDatabase } from '#db';
import { schedulerSettingsFromEnv } from '#scheduling';
import { createApiApp, type ApiApp } from '../../apps/api/src/main.js';
import { flushPrefix } from '../support/redis-keys.js';

export const ADMIN_TOKEN = 'browser-admin-token-0123456789abcdef';

/** The real API (Postgres, Redis) on port 0 over a fresh database, serving the console built by global-setup. */
export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  body: any;
}

export interface ConsoleService {
  url: string;
  api: ApiApp;
  db: TestDatabase;
  request(method: string, path: string, options?: { token?: string | null; body?: unknown }): Promise<Reply>;
  /** Like request, but fails unless the status is 2xx. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ok(method: string, path: string, body?: unknown, token?: string): Promise<any>;
  close(): Promise<void>;
}

export async function startConsoleService(label: string): Promise<ConsoleService> {
  const consoleDir = process.env.QM_TEST_CONSOLE_DIR;
  if (!consoleDir)
    throw new Error(
      'QM_TEST_CONSOLE_DIR is not set: run through the browser Jest project (its global setup builds the console)',
    );
  const db = await createTestDatabase({ label });
  const config = Config.fromEnv({
    QM_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    QM_TOKEN_CACHE_TTL_MS: '0',
    REDIS_URL: process.env['REDIS_URL'],
  }).with({ databaseUrl: db.url, port: 0, host: '127.0.0.1' });
  const scheduler = schedulerSettingsFromEnv({
    QM_REDIS_PREFIX: `qm-test-${label}-${randomBytes(4).toString('hex')}`,
  });
  let api: ApiApp;
  let url: string;
  try {
    api = await createApiApp(config, { migrate: false, scheduler, consoleDir });
    url = await api.listen();
  } catch (error) {
    await db.drop();
    throw error;
  }
  const request: ConsoleService['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? ADMIN_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      // HTML or an asset
    }
    return { status: res.status, headers: res.headers, body };
  };
  return {
    url,
    api,
    db,
    request,
    async ok(method, path, body, token) {
      const r = await request(method, path, { body, token });
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as unknown;
    },
    async close() {
      await api.close();
      await db.drop();
      await flushPrefix(scheduler.redisPrefix, config.redisUrl);
    },
  };
}

const gpuNode = (
  flavor: string,
  zone: string,
  block: string,
  domain: string,
  accelerators = 8,
  schedulable = true,
): Record<string, unknown> => ({
  flavor,
  accelerators,
  cpuMillis: 96000,
  memoryMiB: 1048576,
  topology: { zone, block, domain },
  schedulable,
});

/**
 * A small heterogeneous fleet: H100s in two blocks (one node cordoned), Trainium, Gaudi and a TPU slice;
 * cohort research with teams vision and nlp; quotas on H100 and Trainium.
 */
export async function seedFleet(s: ConsoleService): Promise<void> {
  await s.ok('PUT', '/v1/cohorts/research', { description: 'research pool' });
  await s.ok('PUT', '/v1/flavors/h100-80gb', {
    kind: 'nvidia-gpu',
    memoryGiB: 80,
    relativeSpeed: 2,
    costPerHour: 4,
  });
  await s.ok('PUT', '/v1/flavors/trn1', { kind: 'aws-trainium', relativeSpeed: 1, costPerHour: 1.3 });
  await s.ok('PUT', '/v1/flavors/gaudi2', { kind: 'intel-gaudi', relativeSpeed: 1.2, costPerHour: 1.8 });
  await s.ok('PUT', '/v1/flavors/tpu-v5e', { kind: 'google-tpu', relativeSpeed: 1.5, costPerHour: 1.2 });
  await s.ok('PUT', '/v1/teams/vision', { cohort: 'research' });
  await s.ok('PUT', '/v1/teams/nlp', { cohort: 'research', fairShareWeight: 2 });
  await s.ok('PUT', '/v1/teams/vision/quotas/h100-80gb', {
    nominal: 16,
    borrowingLimit: 0,
    lendingLimit: null,
  });
  await s.ok('PUT', '/v1/teams/nlp/quotas/h100-80gb', { nominal: 16, borrowingLimit: null, lendingLimit: 8 });
  await s.ok('PUT', '/v1/teams/nlp/quotas/trn1', { nominal: 32, borrowingLimit: null, lendingLimit: null });
  await s.ok('PUT', '/v1/nodes/h100-a1', gpuNode('h100-80gb', 'us-east-1a', 'b1', 'nvl-1'));
  await s.ok('PUT', '/v1/nodes/h100-a2', gpuNode('h100-80gb', 'us-east-1a', 'b1', 'nvl-1'));
  await s.ok('PUT', '/v1/nodes/h100-b1', gpuNode('h100-80gb', 'us-east-1a', 'b2', 'nvl-2'));
  await s.ok('PUT', '/v1/nodes/h100-b2', gpuNode('h100-80gb', 'us-east-1a', 'b2', 'nvl-2', 8, false));
  for (let i = 1; i <= 4; i++)
    await s.ok(
      'PUT',
      `/v1/nodes/trn1-${i}`,
      gpuNode('trn1', 'us-east-1b', 'b7', `ultra-${Math.ceil(i / 2)}`, 16),
    );
  await s.ok('PUT', '/v1/nodes/gaudi-1', gpuNode('gaudi2', 'us-east-1c', 'b9', 'g1'));
  await s.ok('PUT', '/v1/nodes/tpu-1', {
    ...gpuNode('tpu-v5e', 'us-central2-b', 'pod-1', 'slice-1', 4),
    topology: { zone: 'us-central2-b', block: 'pod-1', domain: 'slice-1', tpuShape: '2x2' },
  });
}

export async function memberToken(s: ConsoleService, subject: string, teams: string[]): Promise<string> {
  const r = await s.ok('POST', '/v1/tokens', { subject, role: 'member', teams });
  return r.token as string;
}

export function jobBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'llama-ft',
    team: 'vision',
    kind: 'training',
    replicas: 1,
    acceleratorsPerReplica: 8,
    flavors: ['h100-80gb'],
    expectedRuntimeSeconds: 7200,
    template: { image: 'ghcr.io/acme/llama:1', command: ['python', 'train.py'] },
    ...overrides,
  };
}
