import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/** QM_MAX_TEMPLATE_BYTES's default. */
const MAX = 64 * 1024;

/**
 * A template whose stored JSON (defaults filled in, as POST /v1/jobs stores it) is exactly `bytes` long: env
 * values of at most 32,768 characters each (the per-value bound), the last one padded to the byte.
 */
function templateOfSize(bytes: number): Record<string, unknown> {
  const env: Record<string, string> = {};
  const stored = (): string => JSON.stringify({ image: 'busybox', env, cpuMillis: 1000, memoryMiB: 4096 });
  for (let i = 0; stored().length < bytes; i++) {
    env[`BLOB_${i}`] = '';
    env[`BLOB_${i}`] = 'x'.repeat(Math.max(0, Math.min(32_768, bytes - stored().length)));
  }
  if (stored().length !== bytes) throw new Error(`cannot make a template of ${bytes} bytes (got ${stored().length})`);
  return { image: 'busybox', env };
}

describe('pod templates are bounded, and lists carry none (issue #27)', () => {
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    h = await startHarness('api_template_bounds');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('a template larger than QM_MAX_TEMPLATE_BYTES is a 400 naming `template`, and nothing is stored', async () => {
    const before = await h.counts();
    for (const size of [MAX + 1, 900 * 1024]) {
      const r = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'too-large', template: templateOfSize(size) }), headers: { 'idempotency-key': `too-large-${size}` } });
      expect({ size, status: r.status, contentType: r.contentType }).toEqual({ size, status: 400, contentType: expect.stringContaining('application/problem+json') });
      expect(r.body.errors).toEqual([{ field: 'template', message: expect.stringContaining(`at most ${MAX} bytes`) }]);
      expect(r.body.errors[0].message).toContain(`this one is ${size}`);
    }
    expect(await h.counts()).toEqual(before);
    // With the template's other problems, every field is listed.
    const large = templateOfSize(MAX + 1) as { env: Record<string, string> };
    const both = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ template: { ...large, env: { ...large.env, MASTER_PORT: '70000' } } }) });
    expect(both.status).toBe(400);
    expect(both.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['template', 'template.env.MASTER_PORT']);
    expect(await h.counts()).toEqual(before);
    // Exactly at the bound is stored, and returned whole.
    const atBound = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'at-bound', template: templateOfSize(MAX) }) });
    expect(atBound.status).toBe(201);
    expect(JSON.stringify(atBound.body.template)).toHaveLength(MAX);
  });

  it('GET /v1/jobs and GET /v1/queue list jobs without their templates; GET /v1/jobs/{id} has them', async () => {
    const template = templateOfSize(8 * 1024);
    const ids: string[] = [];
    for (const name of ['listed-a', 'listed-b']) {
      const r = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name, template }) });
      expect(r.status).toBe(201);
      expect(r.body.template).toEqual({ ...template, cpuMillis: 1000, memoryMiB: 4096 });
      ids.push(r.body.id as string);
    }
    const listed = await h.request('GET', '/v1/jobs?team=vision&limit=500', { token: alice });
    expect(listed.status).toBe(200);
    expect(listed.body.items.length).toBeGreaterThanOrEqual(2);
    for (const item of listed.body.items) expect(Object.keys(item)).not.toContain('template');
    const queue = await h.request('GET', '/v1/queue?limit=500', { token: alice });
    expect(queue.status).toBe(200);
    expect(queue.body.items.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining(ids));
    for (const item of queue.body.items) expect(Object.keys(item)).not.toContain('template');
    for (const id of ids) {
      const one = await h.request('GET', `/v1/jobs/${id}`, { token: alice });
      expect(one.status).toBe(200);
      expect(one.body.template).toEqual({ ...template, cpuMillis: 1000, memoryMiB: 4096 });
      // The list shows the job as GET shows it, but for the template, the allocation and the transitions.
      const { template: _t, allocation: _a, transitions: _tr, ...summary } = one.body as Record<string, unknown>;
      expect(listed.body.items.find((j: { id: string }) => j.id === id)).toEqual(summary);
    }
  });

  it('a job imported from a Kubernetes workload still names it in lists (the one part of its template they show)', async () => {
    const { id } = (await h.ok('POST', '/v1/jobs', jobBody({ name: 'imported' }))) as { id: string };
    const workload = { apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', namespace: 'vision', name: 'llama-ft', uid: '6f1b9a52-1c1e-4d55-9d8e-2a4a8f0c1b7e' };
    // As the importer stores it: the workload inside the template.
    await h.pg.query(`UPDATE jobs SET template = template || jsonb_build_object('workload', $2::jsonb) WHERE id = $1`, [id, JSON.stringify(workload)]);
    const { items } = (await h.ok('GET', '/v1/jobs?limit=500')) as { items: Record<string, unknown>[] };
    const listed = items.find((j) => j.id === id)!;
    expect(listed.workload).toEqual(workload);
    expect(listed).not.toHaveProperty('template');
    expect(items.filter((j) => j.id !== id).every((j) => !('workload' in j))).toBe(true);
    expect(((await h.ok('GET', `/v1/jobs/${id}`)) as Record<string, unknown>).workload).toEqual(workload);
  });
});
