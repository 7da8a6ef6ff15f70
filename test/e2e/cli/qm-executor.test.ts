import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, type QmResult, runQm } from './qm-process.js';

/**
 * A job's executor outside Kubernetes, from a shell script with its executor token: `qm executor status` and
 * `qm executor progress` report through POST /v1/jobs/{id}/status and /progress. Bad flags exit 2 naming the
 * flag and send nothing; what the API refuses prints its problem's detail.
 */
let h: Harness;
let executor: Record<string, string>;
let member: Record<string, string>;

const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);

/** Exit `code`, one line on stderr, nothing on stdout. */
function refused(r: QmResult, code: number, line: string | RegExp): void {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: '' });
  expect(r.stderr.split('\n')).toHaveLength(2);
  if (typeof line === 'string') expect(r.stderr).toBe(`qm: ${line}\n`);
  else expect(r.stderr).toMatch(line);
}

/** A job of team vision, admitted by one scheduling cycle. */
async function admitted(name: string): Promise<{ id: string }> {
  const job = (await ok('POST', '/v1/jobs', jobBody({ name, replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 3600 }))) as { id: string };
  await ok('POST', '/v1/scheduler/cycles');
  expect((await ok('GET', `/v1/jobs/${job.id}`)).state).toBe('ADMITTED');
  return job;
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_executor');
  await seedTenancy(h);
  const dir = mkdtempSync(join(tmpdir(), 'qm-executor-'));
  const token = (await ok('POST', '/v1/tokens', { subject: 'runner-1', role: 'executor', teams: ['vision'] })) as { token: string };
  executor = { QM_SERVER: h.url, QM_TOKEN: token.token, XDG_CONFIG_HOME: join(dir, 'executor-config') };
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'member-config') };
});
afterAll(async () => {
  await h?.close();
});

describe('qm executor: a job reported from its executor with an executor token', () => {
  it('status running, progress at a checkpoint, status succeeded with a reason: each as the API records it', async () => {
    const job = await admitted('exec-run');
    const running = await runQm(['executor', 'status', 'exec-run', 'running'], { env: executor });
    expect(running).toEqual({ code: 0, stdout: `${job.id} vision/exec-run: RUNNING (was ADMITTED)\n`, stderr: '' });
    expect((await ok('GET', `/v1/jobs/${job.id}`)).state).toBe('RUNNING');

    const again = await runQm(['executor', 'status', `job/exec-run`, 'RUNNING'], { env: executor });
    expect(again).toEqual({ code: 0, stdout: `${job.id} vision/exec-run: already RUNNING\n`, stderr: '' });

    const progress = await runQm(['executor', 'progress', 'exec-run', '--completed-fraction', '0.4', '--checkpoint'], { env: executor });
    expect(progress.code).toBe(0);
    expect(progress.stderr).toBe('');
    expect(progress.stdout).toMatch(new RegExp(`^${job.id} vision/exec-run: 40% done at its last checkpoint, .* ago\\)\\n$`));
    const after = (await ok('GET', `/v1/jobs/${job.id}`)) as { progress: { completedFraction: number; lastCheckpointAt: string } };
    expect(after.progress.completedFraction).toBe(0.4);
    expect(after.progress.lastCheckpointAt).not.toBeNull();

    const at = '2026-01-02T03:04:05Z';
    expect((await runQm(['executor', 'progress', job.id, '--last-checkpoint-at', at], { env: executor })).code).toBe(0);
    expect(Date.parse(((await ok('GET', `/v1/jobs/${job.id}`)) as { progress: { lastCheckpointAt: string } }).progress.lastCheckpointAt)).toBe(Date.parse(at));

    const done = await runQm(['executor', 'status', 'exec-run', 'succeeded', '--reason', 'exit code 0'], { env: executor });
    expect(done).toEqual({ code: 0, stdout: `${job.id} vision/exec-run: SUCCEEDED (was RUNNING)\n`, stderr: '' });
    const detail = (await ok('GET', `/v1/jobs/${job.id}`)) as { state: string; transitions: { to: string; reason: string }[] };
    expect(detail.state).toBe('SUCCEEDED');
    expect(detail.transitions.at(-1)).toMatchObject({ to: 'SUCCEEDED', reason: 'exit code 0' });
  });

  it('status failed --reason: qm why shows the reason', async () => {
    await admitted('exec-fail');
    expect((await runQm(['executor', 'status', 'exec-fail', 'failed', '--reason', 'exit code 137 (OOMKilled)'], { env: executor })).code).toBe(0);
    expect((await runQm(['why', 'exec-fail'], { env: member })).stdout).toContain('reason: exit code 137 (OOMKilled)');
  });
});

describe('bad flags exit 2 naming the flag, and send nothing', () => {
  let id: string;
  let before: Record<string, number>;
  beforeAll(async () => {
    id = (await admitted('exec-bad')).id;
    before = await h.counts();
  });
  afterAll(async () => {
    expect(await h.counts()).toEqual(before);
    expect((await ok('GET', `/v1/jobs/${id}`)).state).toBe('ADMITTED');
    expect((await ok('GET', `/v1/jobs/${id}`)).progress).toEqual({ completedFraction: null, lastCheckpointAt: null });
  });

  it.each([
    [['status', 'exec-bad', 'paused'], "state 'paused': expected running, succeeded, failed"],
    [['status', 'exec-bad'], "missing required argument 'state' (run with --help for usage)"],
    [['progress', 'exec-bad'], 'give --completed-fraction, --checkpoint or --last-checkpoint-at (or a fraction and a checkpoint)'],
    [['progress', 'exec-bad', '--completed-fraction', '1.5'], "--completed-fraction '1.5': expected a number from 0 to 1, e.g. 0.4"],
    [['progress', 'exec-bad', '--completed-fraction', '-0.1'], "--completed-fraction '-0.1': expected a number from 0 to 1, e.g. 0.4"],
    [['progress', 'exec-bad', '--completed-fraction', '40%'], "--completed-fraction '40%': expected a number from 0 to 1, e.g. 0.4"],
    [['progress', 'exec-bad', '--last-checkpoint-at', 'yesterday'], "--last-checkpoint-at 'yesterday': expected an RFC 3339 time such as 2026-12-02T08:00:00Z"],
    [['progress', 'exec-bad', '--last-checkpoint-at', '2999-01-01T00:00:00Z'], "--last-checkpoint-at '2999-01-01T00:00:00Z': must not be in the future"],
    [['progress', 'exec-bad', '--checkpoint', '--last-checkpoint-at', '2026-01-02T03:04:05Z'], 'use either --checkpoint (now) or --last-checkpoint-at TIME'],
  ])('qm executor %j', async (args, line) => {
    refused(await runQm(['executor', ...args], { env: executor }), 2, line);
  });

  it('qm executor status --reason of 1025 characters', async () => {
    refused(await runQm(['executor', 'status', 'exec-bad', 'failed', '--reason', 'x'.repeat(1025)], { env: executor }), 2, '--reason: at most 1024 characters (this one has 1025)');
  });
});

describe("what the API refuses: its problem's detail, exit 1", () => {
  it('a change the lifecycle does not allow (409), a member token (403), an unknown job', async () => {
    const pending = (await ok('POST', '/v1/jobs', jobBody({ name: 'exec-pending', replicas: 1, acceleratorsPerReplica: 8, flavors: ['a100-80gb'] }))) as { id: string };
    refused(await runQm(['executor', 'status', 'exec-pending', 'running'], { env: executor }), 1, `job ${pending.id} is PENDING and cannot become RUNNING`);
    refused(await runQm(['executor', 'progress', 'exec-pending', '--completed-fraction', '0.5'], { env: executor }), 1, new RegExp(`^qm: job ${pending.id} is PENDING: progress is reported while it holds accelerators`));
    refused(await runQm(['executor', 'status', 'exec-pending', 'failed'], { env: member }), 1, 'alice is a member: job states are reported by admins and by executor tokens of team vision');
    refused(await runQm(['executor', 'status', 'no-such-job', 'running'], { env: executor }), 1, /^qm: no job named no-such-job/);
    expect((await ok('GET', `/v1/jobs/${pending.id}`)).state).toBe('PENDING');
  });
});

describe('the executor contract is in the help', () => {
  it.each([['executor'], ['executor', 'status'], ['executor', 'progress']])('qm %s --help: report RUNNING within the gang timeout, 5 minutes, or the job is requeued and its hours wasted', async (...path) => {
    const help = await runQm([...path, '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('reports RUNNING within the gang timeout: 5 minutes from admission by default');
    expect(text).toContain('the scheduler requeues the job');
    expect(text).toContain('count as wasted');
  });
});
