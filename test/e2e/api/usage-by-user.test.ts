// GET /v1/usage?groupBy=user (issue #30): the ledger's hours per person who submitted the jobs (their token's
// subject), as `sacct -u` or Slurm's per-user accounting reports them — in JSON, CSV and `qm usage --by team,user`;
// members see only their teams' users.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';
import { buildQm, runQm } from '../cli/qm-process.js';

let h: Harness;
let alice: string;
let carol: string;
let bob: string;
const sam: { id: string; token: string }[] = [];

/** Submits as `token`, admits (one cycle), runs, and ends the job as `end`. */
async function ran(token: string, team: string, name: string, end: 'SUCCEEDED' | 'FAILED' | null): Promise<string> {
  const job = await h.request('POST', '/v1/jobs', { token, body: jobBody({ name, team, replicas: 1, acceleratorsPerReplica: 2 }) });
  expect(job.status).toBe(201);
  const id = job.body.id as string;
  expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBeLessThan(300);
  expect((await h.request('POST', `/v1/jobs/${id}/status`, { body: { state: 'RUNNING' } })).status).toBe(200);
  if (end !== null) expect((await h.request('POST', `/v1/jobs/${id}/status`, { body: { state: end } })).status).toBe(200);
  return id;
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('api_usage_by_user');
  await seedTenancy(h);
  alice = await memberToken(h, 'alice', ['vision']);
  carol = await memberToken(h, 'carol', ['vision']);
  bob = await memberToken(h, 'bob', ['nlp']);
  await ran(alice, 'vision', 'a1', 'SUCCEEDED');
  await ran(alice, 'vision', 'a2', null);
  await ran(carol, 'vision', 'c1', 'FAILED');
  await ran(bob, 'nlp', 'b1', 'SUCCEEDED');
  // Two people whose tokens share the subject "sam": a user is a token, not a name.
  for (let i = 0; i < 2; i++) {
    const r = await h.request('POST', '/v1/tokens', { body: { subject: 'sam', role: 'member', teams: ['nlp'] } });
    expect(r.status).toBe(201);
    sam.push({ id: r.body.id as string, token: r.body.token as string });
  }
  await ran(sam[0]!.token, 'nlp', 's1', 'SUCCEEDED');
  await ran(sam[1]!.token, 'nlp', 's2', 'FAILED');
});

afterAll(async () => {
  await h?.close();
});

describe('usage per user', () => {
  it('splits each team by who submitted, and the parts add up to the team', async () => {
    const r = await h.request('GET', '/v1/usage?groupBy=team,user');
    expect(r.status).toBe(200);
    expect(r.body.groupBy).toEqual(['team', 'user']);
    const items = r.body.items as { team: string; user: string; acceleratorSeconds: number; wastedAcceleratorSeconds: number; jobsCompleted: number }[];
    expect(items.map((i) => [i.team, i.user])).toEqual([['nlp', 'bob'], ['nlp', 'sam'], ['nlp', 'sam'], ['vision', 'alice'], ['vision', 'carol']]);
    const [b, , , a, c] = items;
    expect(a).toMatchObject({ jobsCompleted: 1, wastedAcceleratorSeconds: 0 });
    expect(c!.jobsCompleted).toBe(0);
    expect(c!.wastedAcceleratorSeconds).toBe(c!.acceleratorSeconds); // failed: all of it thrown away
    expect(b!.jobsCompleted).toBe(1);
    const teams = (await h.request('GET', '/v1/usage?groupBy=team')).body.items as { team: string; acceleratorSeconds: number }[];
    const vision = teams.find((t) => t.team === 'vision')!;
    // alice's running job counts up to each request's now: the later team figure is at least the sum.
    expect(vision.acceleratorSeconds).toBeGreaterThanOrEqual(a!.acceleratorSeconds + c!.acceleratorSeconds - 1e-3);
  });

  it('tells apart two tokens that share a subject: one line per token, each with its own hours', async () => {
    const items = (await h.request('GET', '/v1/usage?groupBy=user')).body.items as { user: string; userToken: string | null; jobsCompleted: number; wastedAcceleratorSeconds: number; acceleratorSeconds: number }[];
    const sams = items.filter((i) => i.user === 'sam');
    const [first, second] = [sam[0]!.id, sam[1]!.id];
    expect(sams.map((i) => i.userToken).sort()).toEqual([first, second].sort());
    const byToken = new Map(sams.map((i) => [i.userToken, i]));
    expect(byToken.get(first)).toMatchObject({ jobsCompleted: 1, wastedAcceleratorSeconds: 0 });
    expect(byToken.get(second)!.jobsCompleted).toBe(0);
    expect(byToken.get(second)!.wastedAcceleratorSeconds).toBe(byToken.get(second)!.acceleratorSeconds);
  });

  it("shows a member only their teams' users; CSV has a user column", async () => {
    const mine = await h.request('GET', '/v1/usage?groupBy=user', { token: bob });
    expect(mine.body.teams).toEqual(['nlp']);
    expect(mine.body.items.map((i: { user: string }) => i.user)).toEqual(['bob', 'sam', 'sam']);
    const res = await fetch(`${h.url}/v1/usage?groupBy=team,user`, { headers: { authorization: 'Bearer e2e-admin-token-0123456789abcdef', accept: 'text/csv' } });
    const lines = (await res.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('team,user,user_token,accelerator_hours,wasted_accelerator_hours,cost,jobs_completed,nominal_share');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(['nlp,bob', 'nlp,sam', 'nlp,sam', 'vision,alice', 'vision,carol']);
    expect(lines[2]!.split(',')[2]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('qm usage --by team,user prints a USER column', async () => {
    const env = { QM_SERVER: h.url, QM_TOKEN: alice, XDG_CONFIG_HOME: join(mkdtempSync(join(tmpdir(), 'qm-usage-user-')), 'config') };
    const r = await runQm(['usage', '--by', 'team,user'], { env });
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l !== '').slice(1);
    expect(rows[0]).toMatch(/^TEAM +USER +TOKEN +ACCEL-HOURS/);
    expect(rows.slice(1, 3).map((l) => l.trim().split(/\s{2,}/).slice(0, 2))).toEqual([['vision', 'alice'], ['vision', 'carol']]);
  });
});
