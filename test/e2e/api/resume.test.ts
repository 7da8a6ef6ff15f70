import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * A requeued job that checkpoints resumes with its remaining work: the fraction its checkpoint holds when it
 * is requeued (and what it checkpoints in its grace period) is carried into its next run, so its expected
 * end — and with it every estimated start and reservation behind it — counts only the rest of its runtime.
 */
let h: Harness;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const HOUR = 3600;
const ms = (iso: string): number => new Date(iso).getTime();

beforeAll(async () => {
  h = await startHarness('api_resume');
  await seedTenancy(h); // two 8-GPU h100 nodes
});
afterAll(async () => {
  await h.close();
});

describe('a requeued job resumes with its remaining work', () => {
  it('its expected end after the requeue counts only the work its checkpoint left', async () => {
    // `resumable` (10 h, checkpoints, 60 s grace) and `long` (100 h) fill both nodes.
    const resumable = await ok('POST', '/v1/jobs', jobBody({ name: 'resumable', priority: 0, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 10 * HOUR, checkpoint: { intervalSeconds: 600, gracePeriodSeconds: 60 } }));
    await ok('POST', '/v1/scheduler/cycles');
    const long = await ok('POST', '/v1/jobs', jobBody({ name: 'long', priority: 0, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 100 * HOUR }));
    await ok('POST', '/v1/scheduler/cycles');
    for (const j of [resumable, long]) await ok('POST', `/v1/jobs/${j.id}/status`, { state: 'RUNNING' });

    // Half its work is in a checkpoint.
    await ok('POST', `/v1/jobs/${resumable.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.5 });

    // An urgent 1 h job preempts it (it loses least: it just checkpointed).
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent', priority: 100, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: HOUR }));
    const preempting = await ok('POST', '/v1/scheduler/cycles');
    expect(preempting.preemptions).toEqual([expect.objectContaining({ victimJobId: resumable.id, preemptorJobId: urgent.id, gracePeriodSeconds: 60 })]);
    await ok('POST', `/v1/jobs/${urgent.id}/status`, { state: 'RUNNING' });
    const urgentEnd = ms((await ok('GET', `/v1/jobs/${urgent.id}`)).admittedAt) + HOUR * 1000;

    // In its grace period it writes a checkpoint holding three quarters of its work: it resumes from there.
    const during = await ok('POST', `/v1/jobs/${resumable.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.75 });
    expect(during.state).toBe('PENDING');

    // Waiting: `resumable` is reserved the urgent job's node from its end; `after` is queued behind it.
    const after = await ok('POST', '/v1/jobs', jobBody({ name: 'after', priority: 0, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: HOUR }));
    const waiting = await ok('POST', '/v1/scheduler/cycles');
    expect(ms(waiting.reservations.find((r: { jobId: string }) => r.jobId === resumable.id).startAt)).toBe(urgentEnd);

    // The urgent job ends; `resumable` is admitted again, expected to end 2.5 h after its admission (not
    // 10 h): the job behind it is estimated to start then, over REST and in the cycle's reservation.
    await ok('POST', `/v1/jobs/${urgent.id}/status`, { state: 'SUCCEEDED' });
    const resuming = await ok('POST', '/v1/scheduler/cycles');
    expect(resuming.admissions).toEqual([expect.objectContaining({ jobId: resumable.id })]);
    const resumed = await ok('GET', `/v1/jobs/${resumable.id}`);
    expect([resumed.state, resumed.progress]).toEqual(['ADMITTED', { lastCheckpointAt: during.progress.lastCheckpointAt, completedFraction: 0.75 }]);
    const resumedEnd = ms(resumed.admittedAt) + 2.5 * HOUR * 1000;
    expect(ms(resuming.reservations.find((r: { jobId: string }) => r.jobId === after.id).startAt)).toBe(resumedEnd);
    expect(ms((await ok('GET', `/v1/jobs/${after.id}`)).pending.estimatedStartAt)).toBe(resumedEnd);

    // Every later cycle reads it as a running job (from the database, not the admission just decided): still
    // 2.5 h from its admission, and progress reported by the resumed run does not shorten it again.
    await ok('POST', `/v1/jobs/${resumable.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${resumable.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.9 });
    const later = await ok('POST', '/v1/scheduler/cycles');
    expect(ms(later.reservations.find((r: { jobId: string }) => r.jobId === after.id).startAt)).toBe(resumedEnd);
    expect(ms((await ok('GET', `/v1/jobs/${after.id}`)).pending.estimatedStartAt)).toBe(resumedEnd);
  });

  it('a job that does not checkpoint restarts from scratch: its full runtime', async () => {
    const jobs = (await ok('GET', '/v1/jobs?limit=500')).items as { id: string; name: string }[];
    for (const j of jobs.filter((x) => x.name !== 'long')) await h.request('DELETE', `/v1/jobs/${j.id}`);
    const plain = await ok('POST', '/v1/jobs', jobBody({ name: 'plain', priority: 0, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 10 * HOUR }));
    await ok('POST', '/v1/scheduler/cycles');
    await ok('POST', `/v1/jobs/${plain.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${plain.id}/progress`, { completedFraction: 0.5 });
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent-2', priority: 100, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: HOUR }));
    expect((await ok('POST', '/v1/scheduler/cycles')).preemptions).toEqual([expect.objectContaining({ victimJobId: plain.id, preemptorJobId: urgent.id })]);
    await ok('POST', `/v1/jobs/${urgent.id}/status`, { state: 'SUCCEEDED' });
    expect((await ok('POST', '/v1/scheduler/cycles')).admissions).toEqual([expect.objectContaining({ jobId: plain.id })]);
    const rerun = await ok('GET', `/v1/jobs/${plain.id}`);
    const after = await ok('POST', '/v1/jobs', jobBody({ name: 'after-2', priority: 0, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: HOUR }));
    await ok('POST', '/v1/scheduler/cycles');
    expect(ms((await ok('GET', `/v1/jobs/${after.id}`)).pending.estimatedStartAt)).toBe(ms(rerun.admittedAt) + 10 * HOUR * 1000);
  });
});
