import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/** Keys a JavaScript object inherits (or treats specially): data to the API like any other key. */
const PROTOTYPE_NAMES = ['hasOwnProperty', 'toString', 'constructor', '__proto__', 'valueOf', 'isPrototypeOf'];

/** `body` as JSON text with `key` added at the top level (JSON.stringify would drop `__proto__`). */
const withKey = (body: Record<string, unknown>, key: string, value: unknown = { x: 1 }): string =>
  JSON.stringify(body).replace(/}$/, `${Object.keys(body).length > 0 ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(value)}}`);

describe('keys named like Object.prototype members', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_object_keys');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const BODIES: [string, string, Record<string, unknown>][] = [
    ['PUT', '/v1/cohorts/c1', { description: 'x' }],
    ['PUT', '/v1/flavors/f1', { kind: 'nvidia-gpu' }],
    ['PUT', '/v1/teams/t1', {}],
    ['PATCH', '/v1/teams/vision', { fairShareWeight: 1 }],
    ['PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 16, borrowingLimit: 8, lendingLimit: null }],
    ['PUT', '/v1/nodes/n1', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 1000, memoryMiB: 1000 }],
    ['PUT', '/v1/teams/vision/budgets/month', { limit: 10, unit: 'accelerator-hours', onExhausted: 'warn' }],
    ['POST', '/v1/tokens', { subject: 's', role: 'admin' }],
    ['POST', '/v1/jobs', jobBody()],
  ];

  it('as top-level fields of any body they are 400 unknown field, and nothing is written', async () => {
    const before = await h.counts();
    for (const [method, path, body] of BODIES) {
      for (const key of PROTOTYPE_NAMES) {
        const r = await h.request(method, path, { raw: withKey(body, key) });
        expect({ method, path, key, status: r.status, errors: r.body.errors }).toEqual({
          method,
          path,
          key,
          status: 400,
          errors: [{ field: key, message: 'is not a known field' }],
        });
      }
    }
    expect(await h.counts()).toEqual(before);
  });

  it('an unknown one is reported with the other bad fields of the body', async () => {
    const r = await h.request('PUT', '/v1/flavors/f1', { raw: withKey({ kind: 'cpu' }, 'toString') });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['kind', 'toString']);
  });

  it('inside nested objects and query strings they are unknown fields too', async () => {
    for (const key of PROTOTYPE_NAMES) {
      const job = JSON.stringify(jobBody({ template: { image: 'x' }, topology: { level: 'zone' } }));
      const inTemplate = await h.request('POST', '/v1/jobs', { raw: job.replace('"image":"x"', `"image":"x",${JSON.stringify(key)}:1`) });
      expect({ key, status: inTemplate.status, errors: inTemplate.body.errors }).toEqual({ key, status: 400, errors: [{ field: `template.${key}`, message: 'is not a known field' }] });
      const inTopology = await h.request('POST', '/v1/jobs', { raw: job.replace('"level":"zone"', `"level":"zone",${JSON.stringify(key)}:1`) });
      expect({ key, status: inTopology.status }).toEqual({ key, status: 400 });
      const query = await h.request('GET', `/v1/jobs?${encodeURIComponent(key)}=1`);
      expect({ key, status: query.status, errors: query.body.errors }).toEqual({ key, status: 400, errors: [{ field: key, message: 'is not a known field' }] });
    }
  });

  it('an object with a constructor key where a string or list belongs is a 400 naming the field, not a 500', async () => {
    for (const body of [jobBody({ name: { constructor: 'x' } }), jobBody({ template: { image: 'x', command: [{ constructor: 1 }] } }), jobBody({ template: { image: 'x', env: [{ constructor: 1 }] } })]) {
      const r = await h.request('POST', '/v1/jobs', { body });
      expect(r.status).toBe(400);
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('as keys of flavor nodeLabels they are stored and returned exactly as sent', async () => {
    const labels = { toString: 'yes', hasOwnProperty: 'no', constructor: 'x', valueOf: 'v', 'example.com/gpu': 'h100' };
    const put = await h.request('PUT', '/v1/flavors/labelled', { body: { kind: 'nvidia-gpu', nodeLabels: labels } });
    expect(put.status).toBe(201);
    expect(put.body.nodeLabels).toEqual(labels);
    const got = await h.request('GET', '/v1/flavors/labelled');
    expect(got.body.nodeLabels).toEqual(labels);
    const { rows } = await h.pg.query<{ node_labels: unknown }>("SELECT node_labels FROM flavors WHERE name = 'labelled'");
    expect(rows[0]!.node_labels).toEqual(labels);
  });

  it('as keys of a job template env (and __proto__ too) they are stored and returned exactly as sent', async () => {
    const env = '{"toString":"a","hasOwnProperty":"b","constructor":"c","__proto__":"d","valueOf":"e","WANDB_PROJECT":"llama"}';
    const raw = JSON.stringify(jobBody({ name: 'env-keys', template: { image: 'x', env: '__ENV__' } })).replace('"__ENV__"', env);
    const r = await h.request('POST', '/v1/jobs', { raw });
    expect(r.status).toBe(201);
    const expected = JSON.parse(env) as Record<string, string>;
    expect(Object.keys(expected)).toContain('__proto__'); // JSON.parse keeps it as an own key
    expect(r.body.template.env).toEqual(expected);
    const got = await h.request('GET', `/v1/jobs/${r.body.id}`);
    expect(got.body.template.env).toEqual(expected);
    expect(Object.keys(got.body.template.env).sort()).toEqual(Object.keys(expected).sort());
  });

  it('as keys of a job speeds map (a flavor may be named constructor) they are stored and returned exactly', async () => {
    expect((await h.request('PUT', '/v1/flavors/constructor', { body: { kind: 'nvidia-gpu' } })).status).toBe(201);
    const speeds = { 'h100-80gb': 2, constructor: 1.5 };
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'speedy', flavors: ['h100-80gb', 'constructor'], speeds }) });
    expect(r.status).toBe(201);
    expect(r.body.speeds).toEqual(speeds);
    expect((await h.request('GET', `/v1/jobs/${r.body.id}`)).body.speeds).toEqual(speeds);
  });
});
