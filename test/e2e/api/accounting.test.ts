import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { periodOf } from '#db';
import { BudgetWatcher } from '../../../apps/api/src/accounting/budget-watcher.js';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * Accounting over REST against the real service: GET /v1/usage (JSON and CSV, members scoped to their
 * teams), the price history, budgets (audited, warn events once per period, block through the real
 * scheduling cycle) and the Prometheus metrics. Bad input is refused with the field named and changes nothing.
 */
let h: Harness;
let alice: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const r = await h.request(method, path, { body, ...(token === undefined ? {} : { token }) });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Submits, admits (one cycle) and starts a job; returns its id. */
async function runJob(name: string, team = 'vision'): Promise<string> {
  const job = await ok('POST', '/v1/jobs', jobBody({ name, team, replicas: 1, acceleratorsPerReplica: 4 }));
  await ok('POST', '/v1/scheduler/cycles');
  await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'RUNNING' });
  return job.id as string;
}

beforeAll(async () => {
  h = await startHarness('api_accounting');
  await seedTenancy(h);
  alice = await memberToken(h, 'alice', ['vision']);
  const a = await runJob('a');
  await ok('PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 2, costPerHour: 10 }); // price change mid-run
  await ok('POST', `/v1/jobs/${a}/status`, { state: 'SUCCEEDED' });
  const b = await runJob('b', 'nlp');
  await ok('POST', `/v1/jobs/${b}/status`, { state: 'FAILED' });
});

afterAll(async () => {
  await h?.close();
});

describe('GET /v1/usage', () => {
  it('per team and flavor this month: hours, wasted hours, cost at the price in force, jobs completed, share of nominal', async () => {
    const r = await h.request('GET', '/v1/usage');
    expect(r.status).toBe(200);
    const month = periodOf('month', new Date());
    expect(r.body).toMatchObject({ from: month.start.toISOString(), groupBy: ['team', 'flavor'], teams: null });
    const [nlp, vision] = r.body.items;
    expect(vision).toMatchObject({ team: 'vision', flavor: 'h100-80gb', jobsCompleted: 1, wastedAcceleratorHours: 0 });
    expect(nlp).toMatchObject({ team: 'nlp', flavor: 'h100-80gb', jobsCompleted: 0 });
    expect(nlp.wastedAcceleratorSeconds).toBe(nlp.acceleratorSeconds); // failed: all of it thrown away
    for (const i of [vision, nlp]) {
      expect(i.acceleratorSeconds).toBeGreaterThan(0);
      expect(i.acceleratorHours).toBeCloseTo(i.acceleratorSeconds / 3600, 6);
      expect(i.nominalShare).toBeGreaterThan(0);
    }
    // a ran partly at 4/h and partly at 10/h; b only at 10/h.
    expect(vision.cost).toBeGreaterThan(vision.acceleratorHours * 4 - 1e-9);
    expect(vision.cost).toBeLessThan(vision.acceleratorHours * 10);
    expect(nlp.cost).toBeCloseTo((nlp.acceleratorSeconds / 3600) * 10, 5);
    expect(r.body.total.acceleratorSeconds).toBeCloseTo(vision.acceleratorSeconds + nlp.acceleratorSeconds, 3);
    const prices = await ok('GET', '/v1/flavors/h100-80gb/prices');
    expect(prices.items.map((p: { costPerHour: number }) => p.costPerHour)).toEqual([4, 10]);
  });

  it('groups by day; a member sees only their teams and gets 403 for another', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const mine = await ok('GET', '/v1/usage?groupBy=team,day', undefined, alice);
    expect(mine.teams).toEqual(['vision']);
    expect(mine.items).toEqual([expect.objectContaining({ team: 'vision', period: today, periodStart: `${today}T00:00:00.000Z` })]);
    const other = await h.request('GET', '/v1/usage?team=nlp', { token: alice });
    expect(other.status).toBe(403);
    expect(other.body.detail).toBe('alice may not read the usage of team nlp');
  });

  it('answers CSV on Accept: text/csv', async () => {
    const res = await fetch(`${h.url}/v1/usage?groupBy=team`, { headers: { authorization: 'Bearer e2e-admin-token-0123456789abcdef', accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await res.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('team,accelerator_hours,wasted_accelerator_hours,cost,jobs_completed,nominal_share');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['nlp', 'vision']);
  });

  it.each([
    ['from=yesterday', [{ field: 'from', message: 'must be a date (2026-11-01, UTC midnight) or an RFC 3339 time (2026-11-01T09:00:00Z)' }]],
    ['from=2026-02-30', [{ field: 'from', message: 'must be a date (2026-11-01, UTC midnight) or an RFC 3339 time (2026-11-01T09:00:00Z)' }]],
    ['from=2026-11-02&to=2026-11-01', [{ field: 'to', message: 'must be after from' }]],
    ['groupBy=team,week', [{ field: 'groupBy', message: "'week' is not one of team, user, flavor, day, month" }]],
    ['groupBy=day,month', [{ field: 'groupBy', message: 'use at most one of day, month' }]],
    ['from=2020-01-01&to=2026-01-01&groupBy=day', [{ field: 'to', message: 'with groupBy day, the window may span at most 400 days (use month)' }]],
    ['team=Not_A_Team', [{ field: 'team', message: expect.stringContaining('DNS-1123') }]],
    ['bogus=1', [{ field: 'bogus', message: 'is not a known field' }]],
  ])('refuses %s with 400 naming the field', async (query, errors) => {
    const r = await h.request('GET', `/v1/usage?${query}`);
    expect(r.status).toBe(400);
    expect(r.contentType).toContain('application/problem+json');
    expect(r.body.errors).toEqual(errors);
  });
});

describe('budgets', () => {
  it('PUT creates (201) then replaces (200) a budget, audited like a quota; members read their own, cannot write', async () => {
    const created = await h.request('PUT', '/v1/teams/vision/budgets/month', { body: { limit: 1000, unit: 'accelerator-hours', onExhausted: 'warn' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ team: 'vision', period: 'month', limit: 1000, unit: 'accelerator-hours', onExhausted: 'warn', before: null, current: { state: 'ok', period: periodOf('month', new Date()).label } });
    const replaced = await h.request('PUT', '/v1/teams/vision/budgets/month', { body: { limit: 2000, unit: 'currency', onExhausted: 'warn' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.before).toEqual({ team: 'vision', period: 'month', limit: 1000, unit: 'accelerator-hours', onExhausted: 'warn' });
    const events = await h.pg.query(`SELECT kind, actor, team FROM events WHERE id IN ($1, $2) ORDER BY id`, [created.body.eventId, replaced.body.eventId]);
    expect(events.rows).toEqual([{ kind: 'budget.created', actor: 'admin', team: 'vision' }, { kind: 'budget.updated', actor: 'admin', team: 'vision' }]);
    expect((await ok('GET', '/v1/budgets', undefined, alice)).items.map((b: { team: string }) => b.team)).toEqual(['vision']);
    expect((await h.request('GET', '/v1/teams/nlp/budgets', { token: alice })).status).toBe(403);
    const denied = await h.request('PUT', '/v1/teams/vision/budgets/month', { token: alice, body: { limit: 1, unit: 'currency', onExhausted: 'warn' } });
    expect(denied.status).toBe(403);
  });

  it('refuses bad budgets, naming the field, and writes nothing', async () => {
    const before = await h.counts();
    const cases: [string, unknown, number, unknown][] = [
      ['/v1/teams/vision/budgets/year', { limit: 1, unit: 'currency', onExhausted: 'warn' }, 400, [{ field: 'period', message: 'must be one of day, week, month' }]],
      ['/v1/teams/vision/budgets/month', { limit: -1, unit: 'dollars', onExhausted: 'panic' }, 400, [
        { field: 'limit', message: 'must be ≥ 0' },
        { field: 'unit', message: 'must be one of accelerator-hours, currency' },
        { field: 'onExhausted', message: 'must be one of warn, block, stop' },
      ]],
      ['/v1/teams/vision/budgets/month', {}, 400, [{ field: 'limit', message: 'is required' }, { field: 'unit', message: 'is required' }, { field: 'onExhausted', message: 'is required' }]],
      ['/v1/teams/ghosts/budgets/month', { limit: 1, unit: 'currency', onExhausted: 'warn' }, 422, [{ field: 'team', message: 'unknown team: ghosts' }]],
    ];
    for (const [path, body, status, errors] of cases) {
      const r = await h.request('PUT', path, { body });
      expect({ path, status: r.status, errors: r.body.errors }).toEqual({ path, status, errors });
    }
    expect(await h.counts()).toEqual(before);
    expect((await h.request('DELETE', '/v1/teams/vision/budgets/day')).status).toBe(404);
  });

  it('warn: an event at 80% and at 100%, once per period, and the metrics say so', async () => {
    const set = await ok('PUT', '/v1/teams/nlp/budgets/week', { limit: 0.000001, unit: 'accelerator-hours', onExhausted: 'warn' });
    expect(set.current.state).toBe('exhausted');
    const watcher = h.api.app.get(BudgetWatcher);
    expect(await watcher.check()).toEqual([]); // the PUT already recorded them
    const events = await h.pg.query<{ kind: string; message: string; data: { threshold: number } }>(`SELECT kind, message, data FROM events WHERE team = 'nlp' AND kind IN ('budget.warning', 'budget.exhausted') ORDER BY id`);
    expect(events.rows.map((e) => [e.kind, e.data.threshold])).toEqual([['budget.warning', 80], ['budget.exhausted', 100]]);
    expect(events.rows[1]!.message).toMatch(/^week budget of team nlp exhausted \(warn only\): [\d.,]+ of 0 accelerator-hours in \d{4}-W\d\d$/);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/qm_budget_threshold_reached\{team="nlp",period="week",threshold="1"\} 1/);
    expect(metrics).toMatch(/qm_accelerator_seconds_total\{team="nlp",flavor="h100-80gb"\} \d+(\.\d+)?/);
    expect(metrics).toMatch(/qm_accelerator_seconds_total\{team="vision",flavor="h100-80gb"\} \d+(\.\d+)?/);
  });

  it('block: a new job stays PENDING with BUDGET_EXHAUSTED and starts at the next period; running jobs go on; lifting it lets it run', async () => {
    const running = await runJob('keeps-running', 'nlp');
    await ok('PUT', '/v1/teams/nlp/budgets/day', { limit: 0, unit: 'currency', onExhausted: 'block' });
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'held', team: 'nlp', replicas: 1, acceleratorsPerReplica: 4 }));
    const cycle = await ok('POST', '/v1/scheduler/cycles');
    expect(cycle.pending).toEqual([expect.objectContaining({ jobId: job.id, code: 'BUDGET_EXHAUSTED', estimatedStartAt: periodOf('day', new Date()).end.toISOString() })]);
    const held = await ok('GET', `/v1/jobs/${job.id}`);
    expect(held.state).toBe('PENDING');
    expect(held.pending).toMatchObject({ code: 'BUDGET_EXHAUSTED', estimatedStartAt: periodOf('day', new Date()).end.toISOString() });
    expect(held.pending.message).toMatch(/^team nlp used [\d.,]+ of 0 \(cost\) of its day budget \(\d{4}-\d\d-\d\d\); new jobs wait for the next period, from /);
    expect((await ok('GET', `/v1/jobs/${running}`)).state).toBe('RUNNING');
    await ok('DELETE', '/v1/teams/nlp/budgets/day');
    const next = await ok('POST', '/v1/scheduler/cycles');
    expect(next.admissions.map((a: { jobId: string }) => a.jobId)).toEqual([job.id]);
  });
});
