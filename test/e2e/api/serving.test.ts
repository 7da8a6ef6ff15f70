import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * A `serving` job (an inference server) has no end: unless it says how long it runs, nothing waiting behind
 * it is told it will start when the server is expected to end — before, every job without a runtime was taken
 * to end after an hour, servers included.
 */
describe('serving jobs never end in start estimates', () => {
  let h: Harness;
  const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);

  beforeAll(async () => {
    h = await startHarness('api_serving');
    await seedTenancy(h); // two h100 nodes of 8
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a job that needs the server’s node waits without an estimate; one behind a training job gets its end', async () => {
    const server = await ok('POST', '/v1/jobs', jobBody({ name: 'llm-server', kind: 'serving', replicas: 1, acceleratorsPerReplica: 8 }));
    expect(server.kind).toBe('serving');
    const train = await ok('POST', '/v1/jobs', jobBody({ name: 'train', team: 'nlp', replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 7200 }));
    await ok('POST', '/v1/scheduler/cycles');
    for (const id of [server.id, train.id]) expect((await ok('GET', `/v1/jobs/${id}`)).state).toBe('ADMITTED');

    const wide = await ok('POST', '/v1/jobs', jobBody({ name: 'wide', replicas: 2, acceleratorsPerReplica: 8 }));
    await ok('POST', '/v1/scheduler/cycles');
    const waiting = await ok('GET', `/v1/jobs/${wide.id}`);
    expect(waiting.state).toBe('PENDING');
    expect(waiting.pending).toMatchObject({ code: 'INSUFFICIENT_CAPACITY', estimatedStartAt: null });

    // Without the server in the way, the estimate is the training job's expected end.
    await ok('DELETE', `/v1/jobs/${wide.id}`);
    const one = await ok('POST', '/v1/jobs', jobBody({ name: 'one', replicas: 1, acceleratorsPerReplica: 8 }));
    await ok('POST', '/v1/scheduler/cycles');
    const behindTrain = await ok('GET', `/v1/jobs/${one.id}`);
    const trainEnd = Date.parse((await ok('GET', `/v1/jobs/${train.id}`)).admittedAt) + 7200 * 1000;
    expect(Date.parse(behindTrain.pending.estimatedStartAt)).toBe(trainEnd);
  });

  it('kind is validated: an unknown kind is a 400 naming it', async () => {
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'bad-kind', kind: 'daemon' }) });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['kind']);
  });
});
