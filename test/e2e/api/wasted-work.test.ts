import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * A preempted job that checkpoints resumes from its checkpoint, so the usage ledger counts as wasted only
 * the work after it — the accelerator-hours the scheduler said the preemption loses — not the whole run.
 */
describe('wasted work in the ledger is what the preemption lost', () => {
  let h: Harness;
  const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);

  beforeAll(async () => {
    h = await startHarness('api_wasted_work');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a checkpointing victim wastes accelerators × (preemption − checkpoint); one without a checkpoint wastes its run', async () => {
    // 16 h100s on two nodes: a checkpointing gang takes both.
    const victim = await ok('POST', '/v1/jobs', jobBody({ name: 'ckpt', replicas: 2, acceleratorsPerReplica: 8, checkpoint: { intervalSeconds: 3600, gracePeriodSeconds: 0 } }));
    await ok('POST', '/v1/scheduler/cycles');
    await ok('POST', `/v1/jobs/${victim.id}/status`, { state: 'RUNNING' });
    await sleep(250); // so the checkpoint is visibly later than the admission
    const checkpointAt = new Date().toISOString();
    await ok('POST', `/v1/jobs/${victim.id}/progress`, { lastCheckpointAt: checkpointAt, completedFraction: 0.5 });

    // An urgent job of the same team preempts it.
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent', replicas: 1, acceleratorsPerReplica: 8, priority: 100 }));
    await ok('POST', '/v1/scheduler/cycles');
    expect((await ok('GET', `/v1/jobs/${urgent.id}`)).state).toBe('ADMITTED');

    const detail = await ok('GET', `/v1/jobs/${victim.id}`);
    const admittedAt = Date.parse(detail.transitions.find((t: { to: string }) => t.to === 'ADMITTED').at);
    const releasedAt = Date.parse(detail.transitions.find((t: { from: string; to: string }) => t.from === 'RUNNING' && t.to === 'PREEMPTED').at);
    const events = (await ok('GET', `/v1/jobs/${victim.id}/events`)).items as { kind: string; message: string; data: Record<string, unknown> }[];
    const preempted = events.find((e) => e.kind === 'job.preempted')!;
    expect(preempted.data).toMatchObject({ lostSince: checkpointAt });
    expect(preempted.message).toContain(`since its checkpoint at ${checkpointAt}`);

    const usage = await ok('GET', '/v1/usage?groupBy=team');
    const vision = usage.items.find((i: { team: string }) => i.team === 'vision');
    const lost = (16 * (releasedAt - Date.parse(checkpointAt))) / 1000;
    const run = (16 * (releasedAt - admittedAt)) / 1000;
    expect(run - lost).toBeGreaterThan(16 * 0.2);
    expect(vision.wastedAcceleratorSeconds).toBeCloseTo(lost, 3);

    // A job that does not checkpoint loses its whole run when it is preempted.
    await ok('POST', `/v1/jobs/${urgent.id}/status`, { state: 'SUCCEEDED' });
    await ok('DELETE', `/v1/jobs/${victim.id}`); // requeued, not holding: cancelling it adds nothing to the ledger
    const plain = await ok('POST', '/v1/jobs', jobBody({ name: 'plain', team: 'nlp', replicas: 1, acceleratorsPerReplica: 8 }));
    await ok('POST', '/v1/scheduler/cycles');
    const plainDetail = await ok('GET', `/v1/jobs/${plain.id}`);
    if (plainDetail.state !== 'ADMITTED') throw new Error(`plain is ${plainDetail.state}: ${JSON.stringify(plainDetail.pending)}`);
    await ok('POST', `/v1/jobs/${plain.id}/status`, { state: 'FAILED' });
    const after = await ok('GET', '/v1/usage?groupBy=team');
    const nlp = after.items.find((i: { team: string }) => i.team === 'nlp');
    expect(nlp.wastedAcceleratorSeconds).toBe(nlp.acceleratorSeconds);
    expect(after.items.find((i: { team: string }) => i.team === 'vision').wastedAcceleratorSeconds).toBeCloseTo(lost, 3);
  });
});
