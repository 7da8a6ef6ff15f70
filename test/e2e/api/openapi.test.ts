import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

type Schema = { $ref?: string; type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[]; additionalProperties?: unknown; nullable?: boolean; allOf?: Schema[]; oneOf?: Schema[] };
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
type Paths = Record<string, Record<string, Operation>>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/**
 * Where a JSON value departs from its documented schema: an undocumented property, a missing required one,
 * a value of another type. Objects with additionalProperties are maps and are not checked key by key.
 */
function departures(value: unknown, schema: Schema, components: Record<string, Schema>, at: string): string[] {
  if (value === null && schema.nullable === true) return [];
  if (schema.$ref !== undefined) return departures(value, components[schema.$ref.replace('#/components/schemas/', '')] ?? {}, components, at);
  if (schema.allOf?.length === 1) return departures(value, schema.allOf[0]!, components, at);
  if (schema.oneOf !== undefined) return schema.oneOf.some((s) => departures(value, s, components, at).length === 0) ? [] : [`${at}: matches none of oneOf`];
  if (value === null) return schema.type === undefined && schema.properties === undefined ? [] : [`${at}: null, not documented as nullable`];
  if (schema.type === 'array' || schema.items !== undefined) {
    if (!Array.isArray(value)) return [`${at}: not an array`];
    return value.flatMap((v, i) => (schema.items ? departures(v, schema.items, components, `${at}[${i}]`) : []));
  }
  if (schema.properties !== undefined) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${at}: not an object`];
    const record = value as Record<string, unknown>;
    const out: string[] = [];
    for (const key of Object.keys(record)) {
      const property = schema.properties[key];
      if (property === undefined) out.push(`${at}.${key}: not documented`);
      else out.push(...departures(record[key], property, components, `${at}.${key}`));
    }
    for (const key of schema.required ?? []) if (!(key in record)) out.push(`${at}.${key}: required, missing`);
    return out;
  }
  if (schema.type === 'integer' || schema.type === 'number') return typeof value === 'number' ? [] : [`${at}: not a number`];
  if (schema.type === 'string') return typeof value === 'string' ? [] : [`${at}: not a string`];
  if (schema.type === 'boolean') return typeof value === 'boolean' ? [] : [`${at}: not a boolean`];
  return [];
}

describe('OpenAPI document: a success schema for every operation, and answers that match it', () => {
  let h: Harness;
  let paths: Paths;
  let components: Record<string, Schema>;
  let served: unknown;
  beforeAll(async () => {
    h = await startHarness('api_openapi');
    await seedTenancy(h);
    const doc = await h.request('GET', '/docs/openapi.json', { token: null });
    served = doc.body;
    paths = doc.body.paths as Paths;
    components = (doc.body.components?.schemas ?? {}) as Record<string, Schema>;
  });
  afterAll(async () => {
    await h.close();
  });

  const successOf = (op: Operation): [string, Operation['responses'][string]][] => Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));

  it('is the contract committed in libs/api-client, from which the CLI and the console are typed', async () => {
    const committed = JSON.parse(await readFile(new URL('../../../libs/api-client/openapi.json', import.meta.url), 'utf8')) as unknown;
    expect(served).toEqual(committed);
  });

  it('every operation documents a 2xx answer, and every 2xx answer with a body has a JSON schema with properties', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (op === undefined) continue;
        const success = successOf(op);
        if (success.length === 0) problems.push(`${method.toUpperCase()} ${path}: no 2xx answer`);
        for (const [status, response] of success) {
          if (status === '204') continue;
          const schema = response.content?.['application/json']?.schema;
          const resolved = schema?.$ref !== undefined ? components[schema.$ref.replace('#/components/schemas/', '')] : schema;
          if (resolved === undefined || (resolved.properties === undefined && resolved.items === undefined && resolved.type !== 'string')) {
            problems.push(`${method.toUpperCase()} ${path} ${status}: no success schema`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('what the API answers matches the documented schema', async () => {
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'openapi-job' }) });
    expect(job.status).toBe(201);
    const id = job.body.id as string;
    const token = await h.request('POST', '/v1/tokens', { body: { subject: 'openapi', role: 'member', teams: ['vision'] } });
    const checks: [string, string, string, Record<string, unknown>?][] = [
      ['GET', '/healthz', '/healthz'],
      ['GET', '/readyz', '/readyz'],
      ['GET', '/v1/whoami', '/v1/whoami'],
      ['GET', '/v1/tokens', '/v1/tokens'],
      ['GET', '/v1/flavors', '/v1/flavors'],
      ['GET', '/v1/flavors/h100-80gb', '/v1/flavors/{name}'],
      ['PUT', '/v1/flavors/h100-80gb', '/v1/flavors/{name}', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 2, costPerHour: 4 }],
      ['GET', '/v1/flavors/h100-80gb/prices', '/v1/flavors/{name}/prices'],
      ['GET', '/v1/cohorts', '/v1/cohorts'],
      ['GET', '/v1/cohorts/research', '/v1/cohorts/{name}'],
      ['PUT', '/v1/cohorts/research', '/v1/cohorts/{name}', { description: 'research pool' }],
      ['GET', '/v1/teams', '/v1/teams'],
      ['GET', '/v1/teams/vision', '/v1/teams/{name}'],
      ['PATCH', '/v1/teams/vision', '/v1/teams/{name}', { fairShareWeight: 1 }],
      ['PUT', '/v1/teams/vision/quotas/h100-80gb', '/v1/teams/{team}/quotas/{flavor}', { nominal: 16, borrowingLimit: 8, lendingLimit: null }],
      ['PUT', '/v1/teams/vision/budgets/month', '/v1/teams/{team}/budgets/{period}', { limit: 1000, unit: 'accelerator-hours', onExhausted: 'warn' }],
      ['GET', '/v1/teams/vision/budgets', '/v1/teams/{team}/budgets'],
      ['GET', '/v1/budgets', '/v1/budgets'],
      ['GET', '/v1/usage', '/v1/usage'],
      ['GET', '/v1/nodes', '/v1/nodes'],
      ['GET', '/v1/nodes/gpu-1', '/v1/nodes/{name}'],
      ['GET', '/v1/jobs', '/v1/jobs'],
      ['GET', `/v1/jobs/${id}`, '/v1/jobs/{id}'],
      ['GET', `/v1/jobs/${id}/events`, '/v1/jobs/{id}/events'],
      ['GET', `/v1/jobs/${id}/placement`, '/v1/jobs/{id}/placement'],
      ['POST', '/v1/scheduler/cycles', '/v1/scheduler/cycles'],
      ['GET', '/v1/scheduler', '/v1/scheduler'],
      ['GET', `/v1/jobs/${id}/placement`, '/v1/jobs/{id}/placement'],
      ['GET', '/v1/queue?state=ADMITTED,BINDING,RUNNING', '/v1/queue'],
      ['GET', '/v1/overview', '/v1/overview'],
      ['GET', '/v1/overview/history', '/v1/overview/history'],
      ['GET', '/v1/queue', '/v1/queue'],
      ['GET', '/v1/fleet/nodes', '/v1/fleet/nodes'],
      ['GET', '/v1/fleet/history?resolution=minute', '/v1/fleet/history'],
      ['GET', '/v1/audit', '/v1/audit'],
      ['DELETE', `/v1/jobs/${id}`, '/v1/jobs/{id}'],
      ['DELETE', '/v1/teams/vision/quotas/h100-80gb', '/v1/teams/{team}/quotas/{flavor}'],
    ];
    const problems: string[] = [...(token.status === 201 ? [] : [`POST /v1/tokens → ${token.status}`])];
    const tokenSchema = successOf(paths['/v1/tokens']!['post']!)[0]?.[1].content?.['application/json']?.schema;
    problems.push(...(tokenSchema ? departures(token.body, tokenSchema, components, 'POST /v1/tokens') : ['POST /v1/tokens: no schema']));
    for (const [method, url, template, body] of checks) {
      const r = await h.request(method, url, body === undefined ? {} : { body });
      const op = paths[template]?.[method.toLowerCase()];
      const documented = op?.responses[String(r.status)]?.content?.['application/json']?.schema;
      if (r.status >= 300) problems.push(`${method} ${url} → ${r.status}`);
      else if (documented === undefined) problems.push(`${method} ${url} → ${r.status}: not documented`);
      else problems.push(...departures(r.body, documented, components, `${method} ${url}`));
    }
    expect(problems).toEqual([]);
  });
});
