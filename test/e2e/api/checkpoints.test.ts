import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * Checkpoints over REST: a job declares `checkpoint` on submission, its executor reports progress
 * (POST /v1/jobs/{id}/progress), and the scheduler's preemption picks the victim that loses the least work.
 */
let h: Harness;
let alice: string;
const fields = (body: { errors: { field: string }[] }): string[] => body.errors.map((e) => e.field).sort();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

beforeAll(async () => {
  h = await startHarness('api_checkpoints');
  await seedTenancy(h);
  alice = await memberToken(h, 'alice', ['vision']);
});
afterAll(async () => {
  await h.close();
});

describe('checkpoints and progress', () => {
  it('a job declares its checkpointing; the view shows it and its progress', async () => {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'ckpt', checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 60 } }));
    expect(job).toMatchObject({ checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 60 }, progress: { lastCheckpointAt: null, completedFraction: null } });
    const plain = await ok('POST', '/v1/jobs', jobBody({ name: 'plain', checkpoint: { intervalSeconds: 600 } }));
    expect(plain.checkpoint).toEqual({ intervalSeconds: 600, gracePeriodSeconds: 0 });
    await ok('DELETE', `/v1/jobs/${job.id}`);
    await ok('DELETE', `/v1/jobs/${plain.id}`);
  });

  it.each([
    ['interval 0 and a negative grace period', { intervalSeconds: 0, gracePeriodSeconds: -1 }, ['checkpoint.gracePeriodSeconds', 'checkpoint.intervalSeconds']],
    ['no interval', { gracePeriodSeconds: 30 }, ['checkpoint.intervalSeconds']],
    ['not an object', 1800, ['checkpoint']],
    ['an unknown field', { intervalSeconds: 60, every: 2 }, ['checkpoint.every']],
  ])('rejects a checkpoint with %s (400 naming the field, nothing written)', async (_name, checkpoint, want) => {
    const before = await ok('GET', '/v1/jobs?limit=500');
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'bad-ckpt', checkpoint }) });
    expect(r.status).toBe(400);
    expect(fields(r.body)).toEqual(want);
    expect((await ok('GET', '/v1/jobs?limit=500')).items).toHaveLength(before.items.length);
  });

  it('progress is reported while a job holds accelerators, by admins or executors of its team', async () => {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'reporter', replicas: 1, acceleratorsPerReplica: 8, checkpoint: { intervalSeconds: 900 } }));
    // Pending: nothing to report yet.
    const early = await h.request('POST', `/v1/jobs/${job.id}/progress`, { body: { completedFraction: 0.1 } });
    expect(early.status).toBe(409);
    expect(early.body.detail).toContain('is PENDING');
    await ok('POST', '/v1/scheduler/cycles');
    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'RUNNING' });
    const at = new Date(Date.now() - 1000).toISOString();
    const r = await ok('POST', `/v1/jobs/${job.id}/progress`, { lastCheckpointAt: at, completedFraction: 0.25 });
    expect(r.progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.25 });
    // Each field is kept when the next report leaves it out.
    expect((await ok('POST', `/v1/jobs/${job.id}/progress`, { completedFraction: 0.3 })).progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.3 });
    expect((await ok('GET', `/v1/jobs/${job.id}`)).progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.3 });

    const bad = async (body: unknown, want: string[]): Promise<void> => {
      const b = await h.request('POST', `/v1/jobs/${job.id}/progress`, { body });
      expect([b.status, fields(b.body)]).toEqual([400, want]);
    };
    await bad({}, ['lastCheckpointAt']);
    await bad({ completedFraction: 1.5 }, ['completedFraction']);
    await bad({ lastCheckpointAt: 'yesterday' }, ['lastCheckpointAt']);
    await bad({ lastCheckpointAt: new Date(Date.now() + 3_600_000).toISOString() }, ['lastCheckpointAt']);
    await bad({ completedFraction: 0.5, extra: 1 }, ['extra']);
    expect((await ok('GET', `/v1/jobs/${job.id}`)).progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.3 });

    expect((await h.request('POST', `/v1/jobs/${job.id}/progress`, { token: alice, body: { completedFraction: 0.4 } })).status).toBe(403);
    expect((await h.request('POST', '/v1/jobs/00000000-0000-4000-8000-000000000000/progress', { body: { completedFraction: 0.4 } })).status).toBe(404);
    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'SUCCEEDED' });
  });

  it('preemption evicts the job that loses least since its last checkpoint, and says what it loses', async () => {
    // Two low-priority 8-GPU jobs fill both nodes: `older` first, then `newer`. `older` reports a checkpoint
    // after `newer` started, so it loses less; without checkpoints the newer job would be the victim.
    const older = await ok('POST', '/v1/jobs', jobBody({ name: 'older', priority: 0, replicas: 1, acceleratorsPerReplica: 8, checkpoint: { intervalSeconds: 3600, gracePeriodSeconds: 45 } }));
    await ok('POST', '/v1/scheduler/cycles');
    const newer = await ok('POST', '/v1/jobs', jobBody({ name: 'newer', priority: 0, replicas: 1, acceleratorsPerReplica: 8 }));
    await ok('POST', '/v1/scheduler/cycles');
    expect((await ok('GET', `/v1/jobs/${newer.id}`)).state).toBe('ADMITTED');
    await ok('POST', `/v1/jobs/${older.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.5 });
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent', priority: 100, replicas: 1, acceleratorsPerReplica: 8 }));
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.preemptions).toEqual([
      expect.objectContaining({ victimJobId: older.id, preemptorJobId: urgent.id, gracePeriodSeconds: 45, message: expect.stringMatching(/; loses [\d.]+ accelerator-hours since its checkpoint at /) }),
    ]);
    expect(cycle.preemptions[0].lostAcceleratorSeconds).toBeLessThan(8 * 60);
    expect((await ok('GET', `/v1/jobs/${newer.id}`)).state).toBe('ADMITTED');
  });

  it("a victim's checkpoint written in its grace period is recorded; a job that does not checkpoint, or past its grace period, gets 409", async () => {
    // The previous test left `older` (checkpoints, 45 s grace) preempted by `urgent`: PENDING, its pods given 45 s to checkpoint.
    const jobs = (await ok('GET', '/v1/jobs?limit=500')).items as { id: string; name: string; state: string }[];
    const older = jobs.find((j) => j.name === 'older')!;
    const newer = jobs.find((j) => j.name === 'newer')!;
    expect([older.state, newer.state]).toEqual(['PENDING', 'ADMITTED']);
    const at = new Date(Date.now() - 500).toISOString();
    const during = await ok('POST', `/v1/jobs/${older.id}/progress`, { lastCheckpointAt: at, completedFraction: 0.55 });
    expect([during.state, during.progress]).toEqual(['PENDING', { lastCheckpointAt: at, completedFraction: 0.55 }]);
    expect((await ok('GET', `/v1/jobs/${older.id}`)).progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.55 });

    // `newer` does not checkpoint: preempted too, it has nothing to report.
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent-2', priority: 100, replicas: 1, acceleratorsPerReplica: 8 }));
    expect((await ok('POST', '/v1/scheduler/cycles')).preemptions).toEqual([expect.objectContaining({ victimJobId: newer.id, preemptorJobId: urgent.id })]);
    const plain = await h.request('POST', `/v1/jobs/${newer.id}/progress`, { body: { completedFraction: 0.5 } });
    expect([plain.status, plain.body.detail]).toEqual([409, expect.stringContaining('is PENDING')]);

    // Long after its requeue and its eviction (its grace period and the minute's slack are over), `older` is
    // refused too. (This harness runs no side-effect worker: the test says when the eviction was carried out.)
    await h.pg.query(`UPDATE job_transitions SET at = at - interval '10 minutes' WHERE job_id = $1`, [older.id]);
    await h.pg.query(`UPDATE outbox SET status = 'done', done_at = now() - interval '10 minutes' WHERE kind = 'evict' AND payload ->> 'jobId' = $1`, [older.id]);
    const late = await h.request('POST', `/v1/jobs/${older.id}/progress`, { body: { completedFraction: 0.9 } });
    expect([late.status, late.body.detail]).toEqual([409, expect.stringContaining('within its grace period')]);
    expect((await ok('GET', `/v1/jobs/${older.id}`)).progress.completedFraction).toBe(0.55);
  });
});

describe('the grace period counts from the eviction', () => {
  it('a checkpoint reported while the eviction waits, or within the grace period after it was carried out, is recorded; later, 409', async () => {
    for (const j of (await ok('GET', '/v1/jobs?limit=500')).items as { id: string; state: string }[]) {
      if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state)) await ok('DELETE', `/v1/jobs/${j.id}`);
    }
    const victim = await ok('POST', '/v1/jobs', jobBody({ name: 'late-evicted', priority: 0, replicas: 1, acceleratorsPerReplica: 8, checkpoint: { intervalSeconds: 600, gracePeriodSeconds: 30 } }));
    const filler = await ok('POST', '/v1/jobs', jobBody({ name: 'filler', priority: 100, replicas: 1, acceleratorsPerReplica: 8 }));
    await ok('POST', '/v1/scheduler/cycles');
    expect((await ok('GET', `/v1/jobs/${filler.id}`)).state).toBe('ADMITTED');
    await ok('POST', `/v1/jobs/${victim.id}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.2 });
    const urgent = await ok('POST', '/v1/jobs', jobBody({ name: 'urgent-3', priority: 100, replicas: 1, acceleratorsPerReplica: 8 }));
    expect((await ok('POST', '/v1/scheduler/cycles')).preemptions).toEqual([expect.objectContaining({ victimJobId: victim.id, preemptorJobId: urgent.id })]);
    // Its eviction is an outbox entry, carried out by a side-effect worker after the commit (this harness runs
    // none: the entry waits, and the test says when it was carried out).
    const { rows } = await h.pg.query<{ id: string; status: string }>(`SELECT id::text, status::text FROM outbox WHERE kind = 'evict' AND payload ->> 'jobId' = $1`, [victim.id]);
    expect(rows).toEqual([{ id: expect.any(String), status: 'pending' }]);
    const eviction = rows[0]!.id;
    // The requeue was long ago (well past 30 s + the minute's slack)...
    await h.pg.query(`UPDATE job_transitions SET at = at - interval '10 minutes' WHERE job_id = $1`, [victim.id]);
    const report = async (fraction: number): Promise<number> => (await h.request('POST', `/v1/jobs/${victim.id}/progress`, { body: { completedFraction: fraction } })).status;

    // ...but its eviction has not been carried out yet (a worker held up by a Redis outage): its pods still run and checkpoint.
    expect(await report(0.3)).toBe(200);
    // Carried out only now: its pods have their 30 s from now.
    await h.pg.query(`UPDATE outbox SET status = 'done', done_at = now() WHERE id = $1`, [eviction]);
    expect(await report(0.4)).toBe(200);
    // Carried out long ago: over.
    await h.pg.query(`UPDATE outbox SET status = 'done', done_at = now() - interval '5 minutes' WHERE id = $1`, [eviction]);
    const late = await h.request('POST', `/v1/jobs/${victim.id}/progress`, { body: { completedFraction: 0.9 } });
    expect([late.status, late.body.detail]).toEqual([409, expect.stringContaining('within its grace period')]);
    expect((await ok('GET', `/v1/jobs/${victim.id}`)).progress.completedFraction).toBe(0.4);
  });
});
