import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { periodOf } from '#db';
import { ADMIN_TOKEN, type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm } from './qm-process.js';

/** `qm usage` and `qm budget` (the real binary, no TTY) against the real API: an infra lead's month-end questions. */
let h: Harness;
let admin: Record<string, string>;
let member: Record<string, string>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await h.request(method, path, { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_accounting');
  await seedTenancy(h);
  admin = { QM_SERVER: h.url, QM_TOKEN: ADMIN_TOKEN, XDG_CONFIG_HOME: '/nonexistent' };
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: '/nonexistent' };
  for (const team of ['vision', 'nlp']) {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: `${team}-run`, team, replicas: 1, acceleratorsPerReplica: 4 }));
    await ok('POST', '/v1/scheduler/cycles');
    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'SUCCEEDED' });
  }
});

afterAll(async () => {
  await h?.close();
});

describe('qm usage', () => {
  it('a table per team and flavor with a TOTAL row; -o json is the API report; -o csv the API CSV', async () => {
    const table = await runQm(['usage'], { env: admin });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^usage from (\d{4}-\d\d-01 )?00:00 UTC to \d\d:\d\d UTC$/);
    expect(lines[1]!.split(/\s+/)).toEqual(['TEAM', 'FLAVOR', 'ACCEL-HOURS', 'WASTED', 'COST', 'JOBS-DONE', 'OF-NOMINAL']);
    expect(lines.slice(2, 4).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([['nlp', 'h100-80gb'], ['vision', 'h100-80gb']]);
    expect(lines[4]).toMatch(/^TOTAL +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d +2 +\d+\.\d%$/);
    expect(lines).toHaveLength(5);
    const json = JSON.parse((await runQm(['usage', '--by', 'team,day', '-o', 'json'], { env: admin })).stdout);
    expect(json.groupBy).toEqual(['team', 'day']);
    expect(json.items).toHaveLength(2);
    expect(json.total.jobsCompleted).toBe(2);
    const csv = await runQm(['usage', '--month', new Date().toISOString().slice(0, 7), '--by', 'team', '-o', 'csv'], { env: admin });
    expect(csv.stdout.split('\r\n')[0]).toBe('team,accelerator_hours,wasted_accelerator_hours,cost,jobs_completed,nominal_share');
    expect(csv.stdout.split('\r\n').slice(1, 3).map((l) => l.split(',')[0])).toEqual(['nlp', 'vision']);
  });

  it('a member sees only their team; bad dates and flags are one-line errors', async () => {
    const mine = JSON.parse((await runQm(['usage', '-o', 'json'], { env: member })).stdout);
    expect(mine.teams).toEqual(['vision']);
    expect(mine.items.map((i: { team: string }) => i.team)).toEqual(['vision']);
    expect(await runQm(['usage', '--team', 'nlp'], { env: member })).toMatchObject({ code: 1, stdout: '', stderr: 'qm: alice may not read the usage of team nlp\n' });
    expect(await runQm(['usage', '--from', 'last tuesday'], { env: admin })).toMatchObject({
      code: 2,
      stderr: 'qm: invalid request: from: must be a date (2026-11-01, UTC midnight) or an RFC 3339 time (2026-11-01T09:00:00Z)\n',
    });
    expect(await runQm(['usage', '--month', '2026-13'], { env: admin })).toMatchObject({ code: 2, stderr: "qm: --month '2026-13': expected YYYY-MM, e.g. 2026-11\n" });
    expect(await runQm(['usage', '--month', '2026-11', '--from', '2026-11-01'], { env: admin })).toMatchObject({ code: 2, stderr: 'qm: use either --month or --from/--to\n' });
  });
});

describe('qm budget', () => {
  it('set (audited), ls, and rm; values not given keep the current budget\'s', async () => {
    const set = await runQm(['budget', 'set', 'vision', '--period', 'month', '--limit', '5000', '--unit', 'accelerator-hours', '--on-exhausted', 'block'], { env: admin });
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(
      /^budget vision\/month: 5,000\.00 accelerator-hours per month, block when exhausted \(was none; audit event \d+\); used 0\.\d\d \(0\.0%\) of \d{4}-\d\d, ok\nwhen used up: new jobs wait for the next period; running jobs go on, so the team can go over its limit\n$/,
    );
    const again = await runQm(['budget', 'set', 'vision', '--limit', '6000'], { env: admin });
    expect(again.stdout).toMatch(/^budget vision\/month: 6,000\.00 accelerator-hours per month, block when exhausted \(was 5,000\.00 accelerator-hours per month, block when exhausted;/);
    const ls = await runQm(['budget', 'ls'], { env: member });
    expect(ls.stdout.split('\n')[0]!.split(/\s+/)).toEqual(['TEAM', 'PERIOD', 'LIMIT', 'UNIT', 'ON-EXHAUSTED', 'RUNNING-JOBS', 'CURRENT', 'USED', 'SHARE', 'OVER', 'STATE', 'RESETS']);
    expect(ls.stdout).toMatch(/vision +month +6,000\.00 +accelerator-hours +block +continue +\d{4}-\d\d +0\.\d\d +0\.0% +- +ok +\d{4}-\d\d-01 00:00 UTC/);
    expect(ls.stdout).toContain('\nRUNNING-JOBS once a budget is used up: continue — they go on (warn; block holds only new jobs back), so OVER can grow;\n');
    expect(await runQm(['budget', 'set', 'vision', '--limit', '1'], { env: member })).toMatchObject({ code: 1, stderr: 'qm: alice is a member; this needs an admin token\n' });
    expect(await runQm(['budget', 'set', 'vision', '--unit', 'euros'], { env: admin })).toMatchObject({ code: 2, stderr: "qm: --unit 'euros': expected one of accelerator-hours, currency\n" });
    expect(await runQm(['budget', 'set', 'nlp', '--on-exhausted', 'block'], { env: admin })).toMatchObject({ code: 2, stderr: 'qm: team nlp has no month budget yet: --limit is required\n' });
    const rm = await runQm(['budget', 'rm', 'vision'], { env: admin });
    expect(rm.stdout).toMatch(/^budget vision\/month deleted \(audit event \d+\)\n$/);
    expect(await runQm(['budget', 'rm', 'vision'], { env: admin })).toMatchObject({ code: 1, stderr: 'qm: month budget of team vision does not exist\n' });
  });

  it('a block budget that is used up: qm why says the job waits for the next period and when it begins', async () => {
    expect((await runQm(['budget', 'set', 'vision', '--period', 'week', '--limit', '0', '--unit', 'currency', '--on-exhausted', 'block'], { env: admin })).code).toBe(0);
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'waits-for-budget', team: 'vision', replicas: 1, acceleratorsPerReplica: 4 }));
    await ok('POST', '/v1/scheduler/cycles');
    const why = await runQm(['why', 'waits-for-budget'], { env: member });
    expect(why.code).toBe(0);
    const week = periodOf('week', new Date());
    const at = `${week.end.toISOString().slice(0, 10)} 00:00 UTC`;
    expect(why.stdout).toContain('reason: BUDGET_EXHAUSTED — team vision used 0 of 0 (cost) of its week budget');
    expect(why.stdout).toMatch(new RegExp(`expected to start (in about \\d+ (d|h|min|s)( \\d+ (h|min|s))?|any moment now) \\((${at}|00:00 UTC)\\), when the team's next budget period begins\\.`));
    expect((await runQm(['ls', '-o', 'wide'], { env: member })).stdout).toMatch(new RegExp(`${job.id} +waits-for-budget .* BUDGET_EXHAUSTED`));
  });
});

describe('qm budget set --on-exhausted stop', () => {
  it('sets a stop budget and says running jobs are stopped; qm budgets shows it with the overshoot; bad values are usage errors that change nothing', async () => {
    const set = await runQm(['budget', 'set', 'nlp', '--period', 'day', '--limit', '0', '--on-exhausted', 'stop'], { env: admin });
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/^budget nlp\/day: 0\.00 accelerator-hours per day, stop when exhausted \(was none; audit event \d+\); used [\d.,]+ \([^)]*\) of \d{4}-\d\d-\d\d, exhausted(, [\d.,]+ over the limit)?\n/);
    expect(set.stdout).toContain('\nwhen used up: new jobs wait for the next period, and running jobs are stopped within one scheduling cycle: requeued after their checkpoint grace period, they resume in the next period\n');
    const json = JSON.parse((await runQm(['budget', 'set', 'nlp', '--period', 'day', '--on-exhausted', 'stop', '-o', 'json'], { env: admin })).stdout);
    expect(json).toMatchObject({ team: 'nlp', period: 'day', onExhausted: 'stop', whenExhausted: { newJobs: 'wait', runningJobs: 'stop' }, before: { onExhausted: 'stop' } });
    expect(json.current.overshoot).toBeCloseTo(json.current.used, 6);
    const ls = await runQm(['budgets', '--team', 'nlp'], { env: admin });
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/\nnlp +day +0\.00 +accelerator-hours +stop +stop +\d{4}-\d\d-\d\d +[\d.,]+ +- +([\d.,]+|-) +exhausted +/);

    const events = await ok('GET', '/v1/audit?team=nlp');
    for (const bad of ['halt', 'STOP', '']) {
      expect(await runQm(['budget', 'set', 'nlp', '--period', 'day', '--on-exhausted', bad], { env: admin })).toMatchObject({
        code: 2,
        stdout: '',
        stderr: `qm: --on-exhausted '${bad}': expected one of warn, block, stop\n`,
      });
    }
    expect(await ok('GET', '/v1/audit?team=nlp')).toEqual(events);
    expect((await ok('GET', '/v1/teams/nlp/budgets/day')).onExhausted).toBe('stop');
    expect((await runQm(['budget', 'rm', 'nlp', '--period', 'day'], { env: admin })).code).toBe(0);
  });

  it("qm flavor prices: a flavor's price history, oldest first, the last in force", async () => {
    await ok('PUT', '/v1/flavors/a100-80gb', { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 1, costPerHour: 2.5 });
    const r = await runQm(['flavor', 'prices', 'a100-80gb'], { env: member });
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^EFFECTIVE-FROM +COST\/ACCEL-HOUR +PERIOD$/);
    expect(rows.slice(1).map((l) => l.trim().split(/\s{2,}/)[1])).toEqual(['2', '2.5']);
    expect(rows[1]).toContain('until ');
    expect(rows[2]).toContain('in force');
    const json = JSON.parse((await runQm(['flavor', 'prices', 'a100-80gb', '-o', 'json'], { env: member })).stdout) as { costPerHour: number }[];
    expect(json.map((p) => p.costPerHour)).toEqual([2, 2.5]);
    const unknown = await runQm(['flavor', 'prices', 'nope'], { env: member });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('flavor nope');
  });
});

