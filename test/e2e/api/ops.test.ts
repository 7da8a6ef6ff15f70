import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Config } from '#common';
import { createApiApp, StartupError } from '../../../apps/api/src/main.js';
import { createRedis } from '../../../apps/api/src/infra/redis.js';
import { ADMIN_TOKEN, type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

describe('operations: health, readiness, OpenAPI, framework-level errors', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_ops');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('/healthz answers without a token and without dependencies', async () => {
    const r = await h.request('GET', '/healthz', { token: null });
    expect(r).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz checks Postgres and Redis', async () => {
    const r = await h.request('GET', '/readyz', { token: null });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ready');
    expect(r.body.checks.postgres.ok).toBe(true);
    expect(r.body.checks.redis.ok).toBe(true);
  });

  it('/readyz answers 503 naming the dependency that does not answer', async () => {
    const config = Config.fromEnv({ QM_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', REDIS_URL: 'redis://127.0.0.1:1', QM_READY_TIMEOUT_MS: '300' }).with({
      databaseUrl: h.db.url,
      port: 0,
      host: '127.0.0.1',
    });
    const deadRedis = createRedis(config.redisUrl, 300);
    const api = await createApiApp(config, { migrate: false, redis: deadRedis });
    try {
      const url = await api.listen();
      const res = await fetch(`${url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { checks: { postgres: { ok: boolean }; redis: { ok: boolean; error: string } } };
      expect(body.checks.postgres.ok).toBe(true);
      expect(body.checks.redis.ok).toBe(false);
      expect(body.checks.redis.error).toContain('redis://127.0.0.1:1');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
      deadRedis.disconnect();
    }
  });

  it('start-up stops with one clear line when Redis or Postgres cannot be reached', async () => {
    const base = Config.fromEnv({ QM_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', QM_READY_TIMEOUT_MS: '300' }).with({ port: 0, databaseUrl: h.db.url });
    const noRedis = await createApiApp(base.with({ redisUrl: 'redis://127.0.0.1:1' }), { migrate: false }).catch((e: unknown) => e);
    expect(noRedis).toBeInstanceOf(StartupError);
    expect((noRedis as Error).message).toMatch(/^cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(.*ECONNREFUSED.*\): start Redis or fix REDIS_URL$/);
    const noPg = await createApiApp(base.with({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/qm' })).catch((e: unknown) => e);
    expect(noPg).toBeInstanceOf(StartupError);
    expect((noPg as Error).message).toMatch(/^cannot prepare Postgres at postgresql:\/\/postgres@127\.0\.0\.1:1\/qm \(.*ECONNREFUSED.*\): start Postgres or fix DATABASE_URL$/);
  });

  it('/metrics exposes Prometheus metrics, including API requests by route', async () => {
    await h.request('GET', '/v1/flavors');
    const r = await h.request('GET', '/metrics', { token: null });
    expect(r.status).toBe(200);
    expect(r.contentType).toContain('text/plain');
    expect(String(r.body)).toMatch(/qm_api_requests_total\{method="GET",route="\/v1\/flavors",status="200"\} \d+/);
    expect(String(r.body)).toContain('process_cpu_user_seconds_total');
  });

  it('/docs serves the UI and /docs/openapi.json documents every endpoint, generated from the code', async () => {
    const ui = await h.request('GET', '/docs', { token: null });
    expect(ui.status).toBe(200);
    expect(ui.contentType).toContain('text/html');
    expect(String(ui.body)).toContain('/docs/openapi.json');
    const asset = await h.request('GET', '/docs/assets/swagger-ui-bundle.js', { token: null });
    expect(asset.status).toBe(200);
    const doc = await h.request('GET', '/docs/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    const paths = Object.keys(doc.body.paths).sort();
    expect(paths).toEqual(
      [
        '/healthz',
        '/readyz',
        '/v1/tokens',
        '/v1/tokens/{id}',
        '/v1/whoami',
        '/v1/flavors',
        '/v1/flavors/{name}',
        '/v1/cohorts',
        '/v1/cohorts/{name}',
        '/v1/priority-classes',
        '/v1/priority-classes/{name}',
        '/v1/teams',
        '/v1/teams/{name}',
        '/v1/teams/{team}/quotas/{flavor}',
        '/v1/nodes',
        '/v1/nodes/{name}',
        '/v1/jobs',
        '/v1/jobs/{id}',
        '/v1/jobs/{id}/events',
        '/v1/jobs/{id}/status',
        '/v1/jobs/{id}/progress',
        '/v1/scheduler',
        '/v1/scheduler/cycles',
        // read-only views of the web console (apps/api/src/console)
        '/v1/overview',
        '/v1/overview/history',
        '/v1/queue',
        '/v1/fleet/history',
        '/v1/fleet/nodes',
        '/v1/jobs/{id}/placement',
        '/v1/jobs/{id}/priority',
        '/v1/jobs/cancellations',
        '/v1/jobs/holds',
        '/v1/jobs/releases',
        '/v1/jobs/{id}/hold',
        '/v1/jobs/{id}/release',
        '/v1/nodes/{name}/drain',
        '/v1/audit',
        '/v1/usage',
        '/v1/budgets',
        '/v1/flavors/{name}/prices',
        '/v1/teams/{team}/budgets',
        '/v1/teams/{team}/budgets/{period}',
      ].sort(),
    );
    // Teams change by PUT (whole object) or PATCH (merge); nodes, teams, cohorts and flavors can be deleted (409 while in use).
    expect(Object.keys(doc.body.paths['/v1/teams/{name}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    for (const path of ['/v1/nodes/{name}', '/v1/cohorts/{name}', '/v1/flavors/{name}']) {
      expect({ path, delete: Object.keys(doc.body.paths[path].delete?.responses ?? {}) }).toEqual({ path, delete: expect.arrayContaining(['204', '404', '409']) });
    }
    const createJob = doc.body.components.schemas.CreateJobDto;
    expect(createJob.required).toEqual(expect.arrayContaining(['name', 'team', 'flavors', 'template']));
    // A job gives replicas and acceleratorsPerReplica, or roles (each with its own): neither is required alone.
    expect(Object.keys(createJob.properties)).toEqual(expect.arrayContaining(['replicas', 'acceleratorsPerReplica', 'roles']));
    expect(Object.keys(createJob.properties)).toEqual(expect.arrayContaining(['minReplicas', 'flavorSelection', 'speeds', 'topology']));
    const submit = doc.body.paths['/v1/jobs'].post;
    expect(Object.keys(submit.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '409', '422']));
    expect(doc.body.components.schemas.ProblemDoc.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'errors']));
  });

  it('malformed JSON, wrong content type, non-object bodies, huge bodies and unknown routes are problem+json 4xx', async () => {
    const before = await h.counts();
    const cases: [string, Parameters<Harness['request']>[2], number][] = [
      ['malformed JSON', { raw: '{"name": ', headers: { 'content-type': 'application/json' } }, 400],
      ['prototype poisoning', { raw: '{"__proto__": {"x": 1}}', headers: { 'content-type': 'application/json' } }, 400],
      ['text body', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }, 415],
      ['xml body', { raw: '<job/>', headers: { 'content-type': 'application/xml' } }, 415],
      ['array body', { body: [jobBody()] }, 400],
      ['null body', { raw: 'null', headers: { 'content-type': 'application/json' } }, 400],
      ['string body', { body: 'job' }, 400],
      ['huge body', { raw: JSON.stringify(jobBody({ template: { image: 'x'.repeat(2 * 1024 * 1024) } })), headers: { 'content-type': 'application/json' } }, 413],
    ];
    for (const [what, options, status] of cases) {
      const r = await h.request('POST', '/v1/jobs', options);
      expect({ what, status: r.status }).toEqual({ what, status });
      expect(r.contentType).toContain('application/problem+json');
      expect(r.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String), errors: expect.any(Array) });
    }
    const missing = await h.request('GET', '/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.contentType).toContain('application/problem+json');
    expect(await h.counts()).toEqual(before);
  });
});
