import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, type QmResult, runQm } from './qm-process.js';

/**
 * kubectl's and Slurm's habits in the real `qm` against the real API: `-o name` and `--no-headers` on every
 * listing, `qm queue` in the scheduler's order, and `qm submit` from flags without a job file (checked
 * locally: exit 2 naming the flag). `--watch` is in qm-watch.test.ts, exit codes in qm-errors.test.ts.
 */
let h: Harness;
let dir: string;
let member: Record<string, string>;
let admin: Record<string, string>;

const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);
const cells = (line: string): string[] => line.trim().split(/\s{2,}/);
const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

function succeeded(r: QmResult): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
}
/** Exit 2, one line on stderr naming the problem, nothing on stdout. */
function usage(r: QmResult, line: string | RegExp): void {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr.split('\n')).toHaveLength(2);
  if (typeof line === 'string') expect(r.stderr).toBe(`qm: ${line}\n`);
  else expect(r.stderr).toMatch(line);
}

/**
 * `args` with and without --no-headers: the second prints exactly the rows of the first's table (cell by
 * cell), without its header line, nor the `title` lines above or the legend below it.
 */
async function rowsAlone(args: string[], env: Record<string, string>, title = 0): Promise<string[][]> {
  const full = await runQm(args, { env });
  const bare = await runQm([...args, '--no-headers'], { env });
  succeeded(full);
  succeeded(bare);
  const all = full.stdout.split('\n').slice(title);
  const head = all[0]!;
  const end = all.indexOf('', 1);
  const rows = all.slice(1, end < 0 ? undefined : end).map(cells);
  expect(rows.length).toBeGreaterThan(0);
  expect(lines(bare.stdout).map(cells)).toEqual(rows);
  expect(bare.stdout).not.toContain(head);
  return rows;
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_habits');
  await seedTenancy(h);
  dir = mkdtempSync(join(tmpdir(), 'qm-habits-'));
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'member-config') };
  admin = { QM_SERVER: h.url, QM_TOKEN: 'e2e-admin-token-0123456789abcdef', XDG_CONFIG_HOME: join(dir, 'admin-config') };
});
afterAll(async () => {
  await h?.close();
});

describe('-o name: kind/name, one a line', () => {
  it('qm ls, flavors, nodes, teams and cohorts print kind/NAME in the order of their JSON', async () => {
    await ok('POST', '/v1/jobs', jobBody({ name: 'name-one' }));
    await ok('POST', '/v1/jobs', jobBody({ name: 'name-two' }));
    const cases: [string[], string][] = [
      [['ls'], 'job'],
      [['flavors'], 'flavor'],
      [['nodes'], 'node'],
      [['teams'], 'team'],
      [['cohorts'], 'cohort'],
    ];
    for (const [args, kind] of cases) {
      const json = JSON.parse((await runQm([...args, '-o', 'json'], { env: admin })).stdout) as { name: string }[];
      const names = await runQm([...args, '-o', 'name'], { env: admin });
      succeeded(names);
      expect(json.length).toBeGreaterThan(0);
      expect(names.stdout).toBe(json.map((o) => `${kind}/${o.name}\n`).join(''));
    }
    expect((await runQm(['ls', '-o', 'name'], { env: member })).stdout).toBe('job/name-two\njob/name-one\n');
    expect((await runQm(['nodes', '--flavor', 'h100-80gb', '-o', 'name'], { env: admin })).stdout).toBe('node/gpu-1\nnode/gpu-2\n');
  });

  it('qm describe and qm submit -o name; job/NAME is accepted back as a job reference', async () => {
    const described = await runQm(['describe', 'name-one', '-o', 'name'], { env: member });
    expect(described).toMatchObject({ code: 0, stdout: 'job/name-one\n' });
    const why = await runQm(['why', 'job/name-one'], { env: member });
    succeeded(why);
    expect(why.stdout).toContain('vision/name-one');
    const submitted = await runQm(['submit', '--name', 'name-three', '--gpus', '1', '--image', 'busybox', '--team', 'vision', '-o', 'name'], { env: member });
    expect(submitted).toMatchObject({ code: 0, stdout: 'job/name-three\n' });
    const cancelled = await runQm(['cancel', 'job/name-three'], { env: member });
    succeeded(cancelled);
    expect(cancelled.stdout).toMatch(/ vision\/name-three: cancelled \(was PENDING\)\n$/);
  });

  it('an empty listing prints nothing on stdout; -o name is refused where a command has no names', async () => {
    const none = await runQm(['ls', '--state', 'running', '-o', 'name'], { env: member });
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no jobs in state running\n' });
    usage(await runQm(['quota', 'ls', '-o', 'name'], { env: admin }), '-o name: expected one of table, json, yaml');
  });
});

describe('--no-headers: the rows alone', () => {
  it('qm ls, flavors, nodes, teams, cohorts, quota ls, token ls, audit, usage and budgets', async () => {
    await ok('PUT', '/v1/teams/vision/budgets/month', { limit: 500, unit: 'accelerator-hours', onExhausted: 'warn' });
    for (const args of [['flavors'], ['nodes'], ['teams'], ['cohorts'], ['quota', 'ls'], ['token', 'ls'], ['audit'], ['budgets'], ['budget', 'ls']]) {
      await rowsAlone(args, admin);
    }
    // usage: a title line above the table.
    const usageRows = await rowsAlone(['usage', '--by', 'team'], admin, 1);
    expect(usageRows.at(-1)![0]).toBe('TOTAL');
    // Jobs: AGE moves between two runs, so compare the columns that do not.
    const full = lines((await runQm(['ls', '--all-teams'], { env: admin })).stdout);
    const bare = await runQm(['ls', '--all-teams', '--no-headers'], { env: admin });
    succeeded(bare);
    expect(full[0]!.split(/\s+/)[0]).toBe('ID');
    expect(lines(bare.stdout).map((l) => cells(l).slice(0, 4))).toEqual(full.slice(1).map((l) => cells(l).slice(0, 4)));
    // CSV without its header row.
    const csv = lines((await runQm(['usage', '--by', 'team', '-o', 'csv'], { env: admin })).stdout);
    expect(lines((await runQm(['usage', '--by', 'team', '-o', 'csv', '--no-headers'], { env: admin })).stdout)).toEqual(csv.slice(1));
  });
});

describe('qm queue: pending jobs in the scheduler\'s order', () => {
  const START = /^(\d{4}-\d\d-\d\d )?\d\d:\d\d UTC \((in \d+ (s|min|h|d)( \d+ (s|min|h))?|any moment now)\)$/;

  it('position, job, team, priority, reason and estimated start; the same order as GET /v1/queue', async () => {
    // The cluster (16 × h100) full with one long job, then three waiting jobs of two teams and priorities.
    const blocker = await ok('POST', '/v1/jobs', jobBody({ name: 'q-blocker', replicas: 4, acceleratorsPerReplica: 4, priority: 1000, expectedRuntimeSeconds: 7200 }));
    await ok('POST', '/v1/scheduler/cycles');
    expect((await ok('GET', `/v1/jobs/${blocker.id}`)).state).toBe('ADMITTED');
    await ok('POST', '/v1/jobs', jobBody({ name: 'q-low', priority: 10, expectedRuntimeSeconds: 600 }));
    await ok('POST', '/v1/jobs', jobBody({ name: 'q-high', team: 'nlp', replicas: 1, acceleratorsPerReplica: 8, priority: 500, expectedRuntimeSeconds: 600 }));
    await ok('POST', '/v1/jobs', jobBody({ name: 'q-mid', priority: 100, expectedRuntimeSeconds: 600 }));
    await ok('POST', '/v1/scheduler/cycles');
    const api = (await ok('GET', '/v1/queue?state=PENDING&limit=500')).items as {
      name: string;
      team: string;
      priority: number;
      pending: { position: number | null; code: string | null; estimatedStartAt: string | null };
    }[];
    const names = api.map((j) => j.name);
    expect(names).toEqual(expect.arrayContaining(['q-low', 'q-high', 'q-mid']));

    const r = await runQm(['queue'], { env: admin });
    succeeded(r);
    const [head, ...rows] = lines(r.stdout);
    expect(head!.split(/\s+/)).toEqual(['POSITION', 'JOB', 'TEAM', 'PRIORITY', 'REASON', 'START']);
    expect(rows.map((l) => cells(l)[1])).toEqual(names);
    rows.forEach((line, i) => {
      const j = api[i]!;
      const [position, name, team, priority, reason, start] = cells(line);
      expect([position, name, team, priority, reason]).toEqual([j.pending.position === null ? '-' : String(j.pending.position), j.name, j.team, String(j.priority), j.pending.code ?? '-']);
      if (j.pending.estimatedStartAt === null) expect(start).toBe('-');
      else expect(start).toMatch(START);
    });
    // The scheduler considered them all: each has a position and a reason.
    expect(api.every((j) => j.pending.position !== null && j.pending.code !== null)).toBe(true);

    const json = JSON.parse((await runQm(['queue', '-o', 'json'], { env: admin })).stdout);
    expect(json.map((j: { name: string }) => j.name)).toEqual(names);
    expect((await runQm(['queue', '-o', 'name'], { env: admin })).stdout).toBe(names.map((n) => `job/${n}\n`).join(''));
    const wide = await runQm(['queue', '-o', 'wide'], { env: admin });
    expect(lines(wide.stdout)[0]!.split(/\s+/)).toEqual(['POSITION', 'JOB', 'TEAM', 'PRIORITY', 'REASON', 'START', 'ID', 'KIND', 'ACCELERATORS', 'FLAVORS', 'WAITING', 'MESSAGE']);
    await rowsAlone(['queue', '--team', 'nlp'], admin);
  });

  it('--team, --flavor and --limit (with a hint of how many there are); a member sees their teams', async () => {
    const nlp = await runQm(['queue', '--team', 'nlp', '-o', 'name'], { env: admin });
    expect(nlp.stdout).toBe('job/q-high\n');
    const mine = await runQm(['queue', '-o', 'json'], { env: member });
    expect(new Set(JSON.parse(mine.stdout).map((j: { team: string }) => j.team))).toEqual(new Set(['vision']));
    const total = (await ok('GET', '/v1/queue?state=PENDING')).total as number;
    const two = await runQm(['queue', '--limit', '2', '--no-headers'], { env: admin });
    expect(two.code).toBe(0);
    expect(lines(two.stdout)).toHaveLength(2);
    expect(two.stderr).toBe(`showing the first 2 of ${total} pending jobs (--limit ${total} for all)\n`);
    const none = await runQm(['queue', '--flavor', 'a100-80gb'], { env: admin });
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no pending jobs for flavor a100-80gb\n' });
    // A member asking for another team: 403, a failure.
    expect(await runQm(['queue', '--team', 'nlp'], { env: member })).toMatchObject({ code: 1, stdout: '' });
    usage(await runQm(['queue', '--limit', 'all'], { env: admin }), "--limit 'all': expected a positive integer");
  });
});

describe('qm submit from flags, without a job file', () => {
  it('--name --team --gpus --image [--replicas] [--flavor] and a command after -- make the job the API stores', async () => {
    const r = await runQm(
      ['submit', '--name', 'inline-a', '--team', 'vision', '--gpus', '4', '--replicas', '2', '--image', 'ghcr.io/acme/llama-ft:1.4', '--flavor', 'h100-80gb', '--runtime', '2h', '--', 'python', 'train.py', '--lr', '3e-4'],
      { env: member },
    );
    succeeded(r);
    const id = r.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ok('GET', `/v1/jobs/${id}`)).toMatchObject({
      name: 'inline-a',
      team: 'vision',
      kind: 'training',
      replicas: 2,
      acceleratorsPerReplica: 4,
      flavors: ['h100-80gb'],
      expectedRuntimeSeconds: 7200,
      createdBy: 'alice',
      template: { image: 'ghcr.io/acme/llama-ft:1.4', command: ['python', 'train.py', '--lr', '3e-4'] },
    });
  });

  it('without --flavor: the team\'s quota flavors, fastest first; the team from QM_TEAM; --command split like a shell', async () => {
    await ok('PUT', '/v1/teams/vision/quotas/a100-80gb', { nominal: 8, borrowingLimit: null, lendingLimit: null });
    const r = await runQm(['submit', '--name', 'inline-b', '--gpus', '1', '--image', 'busybox', '--kind', 'eval', '--command', 'sh -c "echo \'hi there\'"', '-o', 'json'], {
      env: { ...member, QM_TEAM: 'vision' },
    });
    succeeded(r);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'inline-b', team: 'vision', kind: 'eval', replicas: 1, acceleratorsPerReplica: 1, flavors: ['h100-80gb', 'a100-80gb'], template: { image: 'busybox', command: ['sh', '-c', "echo 'hi there'"] } });
    // --wait works as with a file.
    const waited = await runQm(['submit', '--name', 'inline-c', '--gpus', '1', '--image', 'busybox', '--team', 'vision', '--wait', '--wait-timeout', '1s', '--poll-interval', '0.2s'], { env: member });
    expect(waited.code).toBe(1);
    expect(waited.stdout).toMatch(/^[0-9a-f-]{36}\n\d\d:\d\d:\d\d UTC {2}PENDING: waiting for the next scheduling cycle\n/);
    expect(waited.stderr).toMatch(/is still PENDING after 1 s; it stays queued/);
  });

  it('mistakes are found before anything is sent: exit 2 naming the flag, nothing written', async () => {
    const before = await h.counts();
    const submit = (...args: string[]) => runQm(['submit', ...args], { env: member, cwd: dir });
    const base = ['--team', 'vision', '--image', 'busybox'];
    writeFileSync(join(dir, 'job.yaml'), 'name: x\n');
    usage(await submit('--name', 'Inline_A', '--gpus', '8', ...base), "--name 'Inline_A': must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)");
    usage(await submit('--name', 'a', '--gpus', 'eight', ...base), "--gpus 'eight': expected a whole number from 0 to 64");
    usage(await submit('--name', 'a', '--gpus', '65', ...base), "--gpus '65': expected a whole number from 0 to 64");
    usage(await submit('--name', 'a', '--gpus', '8', '--replicas', '0', ...base), "--replicas '0': expected a whole number from 1 to 10000");
    usage(await submit('--name', 'a', '--gpus', '8', '--team', 'vision'), 'a job without a file needs --image (or give a job file with -f; see qm submit --help)');
    usage(await submit('--gpus', '8'), 'a job without a file needs --name, --image (or give a job file with -f; see qm submit --help)');
    usage(await submit('--name', 'a', '--gpus', '8', '--image', 'busybox'), '--team is required for a job without a file (or set QM_TEAM, or qm login --team)');
    usage(await submit('-f', 'job.yaml', '--gpus', '8'), 'use either -f FILE or --gpus, not both (the job file holds the whole job)');
    usage(await submit('--name', 'a', '--gpus', '8', ...base, 'python'), /^qm: unexpected argument 'python': give the job file with -f, and a command after --/);
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--command', 'python "train.py'), `--command 'python "train.py': unterminated double quote`);
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--command', 'x', '--', 'y'), 'give the command either with --command or after --, not both');
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--kind', 'sweep'), "--kind 'sweep': expected one of training, eval, batch-inference, serving");
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--runtime', 'soon'), "--runtime 'soon': expected a duration from 1 s to 365 d, e.g. 2h, 90m");
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--flavor', 'H100'), "--flavor 'H100': must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)");
    // What only the server knows is its 400/422, naming the field: exit 2 as well.
    usage(await submit('--name', 'a', '--gpus', '8', ...base, '--flavor', 'tpu-v9'), 'flavors[0]: unknown flavor: tpu-v9');
    usage(await runQm(['submit', '--name', 'a', '--gpus', '8', '--image', 'busybox', '--team', 'ghosts'], { env: admin }), "--team 'ghosts': no such team (qm teams lists them)");
    expect(await h.counts()).toEqual(before);
  });
});

describe('qm priority (scontrol update priority=, through the priority classes)', () => {
  it("changes a pending job's class within the team's ceiling; refuses above it, without a class, and for a job that is no longer pending", async () => {
    await ok('PUT', '/v1/priority-classes/standard', { value: 0, default: true });
    await ok('PUT', '/v1/priority-classes/urgent', { value: 1000 });
    await ok('PUT', '/v1/priority-classes/scavenger', { value: -100 });
    const job = (await h.ok('POST', '/v1/jobs', jobBody({ name: 'reprioritised', priorityClass: 'scavenger' }), member['QM_TOKEN'])) as { id: string };

    const raised = await runQm(['priority', 'reprioritised', 'standard'], { env: member });
    succeeded(raised);
    expect(raised.stdout).toBe(`${job.id} vision/reprioritised: priority scavenger (-100) → standard (0)\n`);
    expect(await ok('GET', `/v1/jobs/${job.id}`)).toMatchObject({ priority: 0, priorityClass: 'standard' });
    const again = await runQm(['priority', 'reprioritised', 'standard'], { env: member });
    expect(again.stdout).toBe(`${job.id} vision/reprioritised: priority already standard (0)\n`);

    // Above the member's ceiling: the server's 403 names the classes it may choose (exit 1, not a usage error).
    const above = await runQm(['priority', 'reprioritised', 'urgent'], { env: member });
    expect(above.code).toBe(1);
    expect(above.stderr).toContain('choose standard, scavenger');
    usage(await runQm(['priority', 'reprioritised'], { env: member }), 'give the priority class to change to, or --value N (admins), not both');
    usage(await runQm(['priority', 'reprioritised', '--value', 'high'], { env: admin }), "--value 'high': expected a whole number such as 100 or -50");
    // A member's number is the server's 400 naming the field: exit 2.
    usage(await runQm(["priority", "reprioritised", "--value", "5"], { env: member }), /^qm: invalid request: priority: members choose a priorityClass/);
    const admins = await runQm(['priority', job.id, '--value', '250'], { env: admin });
    succeeded(admins);
    expect(admins.stdout).toBe(`${job.id} vision/reprioritised: priority standard (0) → 250\n`);

    await ok('DELETE', `/v1/jobs/${job.id}`);
    const late = await runQm(['priority', job.id, 'standard'], { env: member });
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('is CANCELLED: only a PENDING job');
  });

  it('qm cancel by filter: a team\'s jobs by state, name and submitter, as scancel -t -n -u; usage errors exit 2', async () => {
    const sweep = [];
    for (let i = 0; i < 3; i++) sweep.push(((await h.ok('POST', '/v1/jobs', jobBody({ name: 'bulk-sweep' }), member['QM_TOKEN'])) as { id: string }).id);
    const other = ((await h.ok('POST', '/v1/jobs', jobBody({ name: 'bulk-keep' }), member['QM_TOKEN'])) as { id: string }).id;

    const dry = await runQm(['cancel', '--state', 'pending', '--name', 'bulk-sweep', '--team', 'vision', '--dry-run'], { env: member });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(sweep.map((id) => `${id} vision/bulk-sweep: would be cancelled (PENDING)\n`).join(''));
    expect(dry.stderr).toBe('qm: dry run: 3 job(s) of team vision would be cancelled\n');
    for (const id of sweep) expect(await ok('GET', `/v1/jobs/${id}`)).toMatchObject({ state: 'PENDING' });

    const r = await runQm(['cancel', '--state', 'pending', '--name', 'bulk-sweep', '--user', 'alice', '--team', 'vision'], { env: member });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(sweep.map((id) => `${id} vision/bulk-sweep: cancelled (was PENDING)\n`).join(''));
    expect(r.stderr).toBe('qm: cancelled 3 job(s) of team vision\n');
    for (const id of sweep) expect(await ok('GET', `/v1/jobs/${id}`)).toMatchObject({ state: 'CANCELLED' });
    expect(await ok('GET', `/v1/jobs/${other}`)).toMatchObject({ state: 'PENDING' });

    usage(await runQm(['cancel'], { env: member }), 'name the jobs to cancel, or a filter: --state, --name, --user (with --team)');
    usage(await runQm(['cancel', other, '--dry-run'], { env: member }), '--dry-run goes with a filter (--state, --name, --user)');
    usage(await runQm(['cancel', other, '--state', 'pending'], { env: member }), 'give jobs to cancel or a filter (--state, --name, --user), not both');
    usage(await runQm(['cancel', '--state', 'succeeded', '--team', 'vision'], { env: member }), '--state succeeded: only unfinished jobs can be cancelled (pending, admitted, binding, running)');
    usage(await runQm(['cancel', '--name', 'bulk-keep'], { env: member }), "a filter cancels one team's jobs: give --team (or set a default team with qm config)");
    // Another team's: the server's 403 (exit 1).
    expect((await runQm(['cancel', '--state', 'pending', '--team', 'nlp'], { env: member })).code).toBe(1);
    expect(await ok('GET', `/v1/jobs/${other}`)).toMatchObject({ state: 'PENDING' });
  });
});
