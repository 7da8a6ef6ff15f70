import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * A job's template may carry a nodeSelector: the scheduler places it only on nodes carrying every label
 * (nodes get labels from Kubernetes, or over REST), and a job whose labels no node carries says so.
 */
let h: Harness;
const ZONE = 'topology.kubernetes.io/zone';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
const template = (nodeSelector: unknown): Record<string, unknown> => ({ image: 'busybox', cpuMillis: 1000, memoryMiB: 1024, nodeSelector });

beforeAll(async () => {
  h = await startHarness('api_node_selectors');
  await seedTenancy(h);
  // gpu-1 and gpu-2 (zone z1) come from seedTenancy without labels; two labelled nodes beside them.
  for (const [name, zone] of [['gpu-east', 'us-east-1a'], ['gpu-west', 'us-west-2b']] as const) {
    await ok('PUT', `/v1/nodes/${name}`, { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, labels: { [ZONE]: zone, pool: 'reserved' } });
  }
});
afterAll(async () => {
  await h.close();
});

describe('node selectors', () => {
  it('a node shows its labels; a bad label is a 400 naming the field', async () => {
    expect((await ok('GET', '/v1/nodes/gpu-east')).labels).toEqual({ [ZONE]: 'us-east-1a', pool: 'reserved' });
    expect((await ok('GET', '/v1/nodes/gpu-1')).labels).toEqual({});
    const r = await h.request('PUT', '/v1/nodes/gpu-bad', { body: { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 1, memoryMiB: 1, labels: { 'not a key': 'x' } } });
    expect([r.status, r.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, ['labels']]);
    expect((await h.request('GET', '/v1/nodes/gpu-bad')).status).toBe(404);
  });

  it.each([
    ['a key that is not a label key', { 'bad key!': 'a' }],
    ['a value that is not a label value', { [ZONE]: 'not valid!' }],
    ['a non-string value', { [ZONE]: 1 }],
    ['an array', ['a']],
  ])('rejects a nodeSelector with %s (400 naming template.nodeSelector, nothing written)', async (_what, nodeSelector) => {
    const before = (await ok('GET', '/v1/jobs?limit=500')).items.length;
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'bad-selector', template: template(nodeSelector) }) });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['template.nodeSelector']);
    expect((await ok('GET', '/v1/jobs?limit=500')).items).toHaveLength(before);
  });

  it('places the job only on nodes carrying every label of its selector', async () => {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'east', replicas: 2, acceleratorsPerReplica: 4, template: template({ [ZONE]: 'us-east-1a', pool: 'reserved' }) }));
    expect(job.template.nodeSelector).toEqual({ [ZONE]: 'us-east-1a', pool: 'reserved' });
    await ok('POST', '/v1/scheduler/cycles');
    const admitted = await ok('GET', `/v1/jobs/${job.id}`);
    expect(admitted.state).toBe('ADMITTED');
    expect(admitted.allocation.map((a: { node: string }) => a.node)).toEqual(['gpu-east', 'gpu-east']);
    await ok('DELETE', `/v1/jobs/${job.id}`);
  });

  it('a selector no node satisfies leaves the job pending with a reason naming the labels; labelling a node lets it start', async () => {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'central', replicas: 1, acceleratorsPerReplica: 8, template: template({ [ZONE]: 'eu-central-1a' }) }));
    await ok('POST', '/v1/scheduler/cycles');
    const waiting = await ok('GET', `/v1/jobs/${job.id}`);
    expect(waiting.state).toBe('PENDING');
    expect(waiting.pending).toMatchObject({
      code: 'UNSATISFIABLE',
      message: expect.stringContaining('on nodes labelled topology.kubernetes.io/zone=eu-central-1a (its nodeSelector); no schedulable h100-80gb node carries that label'),
    });
    await ok('PUT', '/v1/nodes/gpu-2', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, topology: { zone: 'z1', block: 'b2' }, labels: { [ZONE]: 'eu-central-1a' } });
    await ok('POST', '/v1/scheduler/cycles');
    const admitted = await ok('GET', `/v1/jobs/${job.id}`);
    expect([admitted.state, admitted.allocation.map((a: { node: string }) => a.node)]).toEqual(['ADMITTED', ['gpu-2']]);
    await ok('DELETE', `/v1/jobs/${job.id}`);
  });
});
