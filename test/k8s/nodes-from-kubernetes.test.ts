// In Kubernetes mode the API server is the truth for nodes: a REST write of a node is refused (409) and
// changes nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-nodes', 1);
  await seedTenancy(qm);
  await eventually('2 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 2 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

describe('nodes come from Kubernetes', () => {
  it('PUT /v1/nodes/{name} on a synced node → 409 with a clear message and changes nothing', async () => {
    const name = qm.nodes[0]!;
    const before = await qm.ok('GET', `/v1/nodes/${name}`);
    const put = await qm.request('PUT', `/v1/nodes/${name}`, { flavor: 'a100', accelerators: 8, cpuMillis: 1000, memoryMiB: 1024, topology: { zone: 'elsewhere' }, schedulable: false });
    expect(put.status).toBe(409);
    expect(put.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(put.body.detail).toContain(`node ${name} is synced from its Kubernetes Node object`);
    expect(put.body.detail).toContain('kubectl cordon');
    expect(await qm.ok('GET', `/v1/nodes/${name}`)).toEqual(before);
  });

  it('PUT /v1/nodes/{name} of a node Kubernetes does not have → 409 too, and no row is written', async () => {
    const put = await qm.request('PUT', '/v1/nodes/hand-made-node', { flavor: 'h100', accelerators: 8, cpuMillis: 1000, memoryMiB: 1024 });
    expect(put.status).toBe(409);
    expect(put.body.detail).toContain('nodes come from Kubernetes Node objects');
    expect((await qm.request('GET', '/v1/nodes/hand-made-node')).status).toBe(404);
  });
});
