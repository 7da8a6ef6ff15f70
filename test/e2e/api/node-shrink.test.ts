import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

describe('an admin shrinking a node below what its jobs hold', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_node_shrink');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const node = (accelerators: number, extra: Record<string, unknown> = {}) => ({
    flavor: 'h100-80gb',
    accelerators,
    cpuMillis: 96000,
    memoryMiB: 1048576,
    topology: { zone: 'z1', block: 'b1' },
    ...extra,
  });

  it('is refused with a 409 naming the jobs, and the node is unchanged; within what it holds the change is made', async () => {
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'holder', replicas: 1, acceleratorsPerReplica: 8 }) });
    expect(job.status).toBe(201);
    expect((await h.request('POST', '/v1/scheduler/cycles', { body: {} })).status).toBeLessThan(300);
    const admitted = await h.request('GET', `/v1/jobs/${job.body.id}`);
    expect(admitted.body.state).toBe('ADMITTED');
    const where = admitted.body.allocation[0].node as string;
    const before = await h.request('GET', `/v1/nodes/${where}`);

    const shrink = await h.request('PUT', `/v1/nodes/${where}`, { body: node(4, { topology: before.body.topology }) });
    expect(shrink.status).toBe(409);
    expect(shrink.contentType).toContain('application/problem+json');
    expect(shrink.body.detail).toContain(job.body.id);
    expect(shrink.body.detail).toContain('vision/holder');
    expect(shrink.body.detail).toContain('accelerators 8 held > 4');
    const cpu = await h.request('PUT', `/v1/nodes/${where}`, { body: node(8, { cpuMillis: 10, topology: before.body.topology }) });
    expect(cpu.status).toBe(409);
    expect(cpu.body.detail).toContain('cpuMillis');
    expect((await h.request('GET', `/v1/nodes/${where}`)).body).toEqual(before.body);

    // Cordoning (same capacity) and growing are fine while it holds the job.
    const cordon = await h.request('PUT', `/v1/nodes/${where}`, { body: node(8, { schedulable: false, topology: before.body.topology }) });
    expect(cordon.status).toBe(200);
    expect((await h.request('PUT', `/v1/nodes/${where}`, { body: node(16, { topology: before.body.topology }) })).status).toBe(200);
    // Once the job is gone the node can shrink.
    expect((await h.request('DELETE', `/v1/jobs/${job.body.id}`)).status).toBe(200);
    expect((await h.request('PUT', `/v1/nodes/${where}`, { body: node(4, { topology: before.body.topology }) })).status).toBe(200);
  });
});
