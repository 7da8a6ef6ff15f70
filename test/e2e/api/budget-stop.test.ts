import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { periodOf } from '#db';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/**
 * What a used-up budget does to running jobs, over REST through the real scheduling cycle (issue #26,
 * failure 4): `block` only holds new jobs back — running jobs go on and the overshoot shows; `stop` requeues
 * the team's running jobs within one cycle, each with its checkpoint grace period (an `evict` side effect),
 * PENDING with BUDGET_EXHAUSTED until the next period, and a raised limit lets them run again.
 */
let h: Harness;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Submits, admits (one cycle) and starts a job; returns its id. */
async function runJob(name: string, team: string, extra: Record<string, unknown> = {}): Promise<string> {
  const job = await ok('POST', '/v1/jobs', jobBody({ name, team, replicas: 1, acceleratorsPerReplica: 4, ...extra }));
  const cycle = await ok('POST', '/v1/scheduler/cycles');
  expect(cycle.admissions.map((a: { jobId: string }) => a.jobId)).toContain(job.id);
  await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'RUNNING' });
  return job.id as string;
}

beforeAll(async () => {
  h = await startHarness('api_budget_stop');
  await seedTenancy(h); // vision and nlp, two 8-GPU h100 nodes
});

afterAll(async () => {
  await h?.close();
});

describe('a used-up budget and the running jobs', () => {
  let blocked: string;
  let stopped: string;

  it("block: running jobs go on; the budget says so and how far the team is over its limit", async () => {
    blocked = await runJob('keeps-running', 'vision');
    const set = await ok('PUT', '/v1/teams/vision/budgets/day', { limit: 0, unit: 'accelerator-hours', onExhausted: 'block' });
    expect(set.whenExhausted).toEqual({ newJobs: 'wait', runningJobs: 'continue', summary: 'new jobs wait for the next period; running jobs go on, so the team can go over its limit' });
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.budgetStops).toEqual([]);
    expect((await ok('GET', `/v1/jobs/${blocked}`)).state).toBe('RUNNING');
    const budget = await ok('GET', '/v1/teams/vision/budgets/day');
    expect(budget.current.state).toBe('exhausted');
    expect(budget.current.used).toBeGreaterThan(0);
    expect(budget.current.overshoot).toBeCloseTo(budget.current.used, 6); // limit 0: all of it is over
  });

  it('stop: within one cycle the running job is requeued with BUDGET_EXHAUSTED, its grace period and an evict; its team event names it', async () => {
    stopped = await runJob('stopped', 'nlp', { checkpoint: { intervalSeconds: 600, gracePeriodSeconds: 90 } });
    await ok('POST', `/v1/jobs/${stopped}/progress`, { lastCheckpointAt: new Date().toISOString(), completedFraction: 0.4 });
    const set = await ok('PUT', '/v1/teams/nlp/budgets/day', { limit: 0, unit: 'accelerator-hours', onExhausted: 'stop' });
    expect(set.whenExhausted).toMatchObject({ newJobs: 'wait', runningJobs: 'stop' });
    const dayEnd = periodOf('day', new Date()).end.toISOString();

    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.budgetStops).toEqual([
      {
        jobId: stopped,
        team: 'nlp',
        flavor: 'h100-80gb',
        accelerators: 4,
        period: 'day',
        until: dayEnd,
        lostAcceleratorSeconds: expect.any(Number),
        gracePeriodSeconds: 90,
        message: expect.stringMatching(new RegExp(`^stopped: team nlp used [\\d.,]+ of 0 accelerator-hours of its day budget \\(\\d{4}-\\d\\d-\\d\\d\\); requeued until the next period, from ${dayEnd.replace(/\./g, '\\.')}; resumes from its checkpoint at `)),
      },
    ]);
    expect(cycle.preemptions).toEqual([]);

    const job = await ok('GET', `/v1/jobs/${stopped}`);
    expect(job.state).toBe('PENDING');
    expect(job.pending).toMatchObject({ code: 'BUDGET_EXHAUSTED', estimatedStartAt: dayEnd });
    expect(job.pending.message).toContain('of its day budget');
    const transitions = await h.pg.query<{ from: string; to: string }>(`SELECT "from", "to" FROM job_transitions WHERE job_id = $1 ORDER BY id DESC LIMIT 2`, [stopped]);
    expect(transitions.rows).toEqual([{ from: 'PREEMPTED', to: 'PENDING' }, { from: 'RUNNING', to: 'PREEMPTED' }]);
    // Evicted as a preemption's victim is: the side effect that gives it its grace period.
    const outbox = await h.pg.query<{ kind: string }>(`SELECT kind FROM outbox WHERE payload->>'jobId' = $1 ORDER BY id`, [stopped]);
    expect(outbox.rows.map((r) => r.kind)).toEqual(['bind', 'evict', 'notify']);
    // Requeued, not failed, and not counted as preempted by anyone; it resumes from its checkpoint.
    const row = await h.pg.query(`SELECT preemption_count, preempted_by, resume_fraction FROM jobs WHERE id = $1`, [stopped]);
    expect(row.rows[0]).toEqual({ preemption_count: 0, preempted_by: null, resume_fraction: 0.4 });
    const events = (await ok('GET', `/v1/jobs/${stopped}/events`)).items as { kind: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.kind === 'job.preempted')?.data).toMatchObject({ cause: 'budget', budget: { team: 'nlp', period: 'day', until: dayEnd }, gracePeriodSeconds: 90 });
    const team = await h.pg.query<{ message: string; data: { jobs: { jobId: string }[] } }>(`SELECT message, data FROM events WHERE kind = 'budget.stopped' AND team = 'nlp'`);
    expect(team.rows).toHaveLength(1);
    expect(team.rows[0]!.message).toBe(`day budget of team nlp used up: stopped 1 running job(s) (stopped); they wait for the next period, from ${dayEnd}`);
    expect(team.rows[0]!.data.jobs.map((j) => j.jobId)).toEqual([stopped]);

    // The next cycle keeps it waiting; the block budget's job still runs.
    const next = await ok('POST', '/v1/scheduler/cycles');
    expect(next.budgetStops).toEqual([]);
    expect(next.pending).toEqual([expect.objectContaining({ jobId: stopped, code: 'BUDGET_EXHAUSTED', estimatedStartAt: dayEnd })]);
    expect((await ok('GET', `/v1/jobs/${blocked}`)).state).toBe('RUNNING');
  });

  it('raising the limit lets the stopped job be admitted again', async () => {
    await ok('PUT', '/v1/teams/nlp/budgets/day', { limit: 1000, unit: 'accelerator-hours', onExhausted: 'stop' });
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.admissions.map((a: { jobId: string }) => a.jobId)).toEqual([stopped]);
    expect(cycle.budgetStops).toEqual([]);
  });

  it("refuses onExhausted 'halt' with a 400 naming the field, and changes nothing", async () => {
    const before = await h.counts();
    const budgets = await h.pg.query(`SELECT team, period, limit_amount, on_exhausted::text FROM budgets ORDER BY team, period`);
    const r = await h.request('PUT', '/v1/teams/nlp/budgets/day', { body: { limit: 0, unit: 'accelerator-hours', onExhausted: 'halt' } });
    expect(r.status).toBe(400);
    expect(r.contentType).toContain('application/problem+json');
    expect(r.body.errors).toEqual([{ field: 'onExhausted', message: 'must be one of warn, block, stop' }]);
    expect(await h.counts()).toEqual(before);
    expect((await h.pg.query(`SELECT team, period, limit_amount, on_exhausted::text FROM budgets ORDER BY team, period`)).rows).toEqual(budgets.rows);
  });
});
