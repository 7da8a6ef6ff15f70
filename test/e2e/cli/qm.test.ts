import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, type Harness, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm, startQm } from './qm-process.js';

/**
 * The real `qm` binary (package.json bin, built as `npm ci` builds it) as a child process, without a TTY,
 * against the real API over a fresh database: a researcher's and an infra lead's first hour.
 */
let h: Harness;
let alice: string;
let dir: string;
let member: Record<string, string>;
let admin: Record<string, string>;

const JOB_YAML = `# a researcher's job file, in the API's job shape
name: llama-ft-7
team: vision
replicas: 2
acceleratorsPerReplica: 4
flavors: [h100-80gb]
expectedRuntimeSeconds: 3600
template:
  image: ghcr.io/acme/llama-ft:1.4
  command: [python, train.py]
`;

async function cycle(): Promise<void> {
  const r = await h.request('POST', '/v1/scheduler/cycles');
  if (r.status !== 200) throw new Error(`cycle: ${r.status} ${JSON.stringify(r.body)}`);
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm');
  await seedTenancy(h);
  alice = await memberToken(h, 'alice', ['vision']);
  dir = mkdtempSync(join(tmpdir(), 'qm-e2e-'));
  writeFileSync(join(dir, 'job.yaml'), JOB_YAML);
  member = { QM_SERVER: h.url, QM_TOKEN: alice, XDG_CONFIG_HOME: join(dir, 'member-config') };
  admin = { XDG_CONFIG_HOME: join(dir, 'admin-config') };
});

afterAll(async () => {
  await h?.close();
});

describe('qm login / whoami / logout', () => {
  it('stores server and token in $XDG_CONFIG_HOME/quartermaster/config.yaml with mode 0600 after checking them', async () => {
    const r = await runQm(['login', '--server', h.url, '--token', ADMIN_TOKEN], { env: admin });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`logged in to ${h.url} as admin (role admin: every team); saved to ${join(dir, 'admin-config', 'quartermaster', 'config.yaml')}\n`);
    const path = join(dir, 'admin-config', 'quartermaster', 'config.yaml');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'admin-config', 'quartermaster')).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).toContain(`server: ${h.url}\ntoken: ${ADMIN_TOKEN}\n`);
    expect(await runQm(['whoami'], { env: admin })).toMatchObject({ code: 0, stdout: `admin (role admin: every team) at ${h.url}\n` });
  });

  it('reads the token from stdin with --token -, keeps a default team, and env and flags override the file', async () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'alice-config') };
    const r = await runQm(['login', '--server', h.url, '--token', '-', '--team', 'vision'], { env, stdin: `${alice}\n` });
    expect(r.code).toBe(0);
    const who = await runQm(['whoami', '-o', 'json'], { env });
    expect(JSON.parse(who.stdout)).toEqual({ subject: 'alice', role: 'member', teams: ['vision'], tokenId: expect.any(String) });
    // QM_TOKEN beats the file; --token beats QM_TOKEN.
    expect((await runQm(['whoami'], { env: { ...env, QM_TOKEN: ADMIN_TOKEN } })).stdout).toContain('admin (role admin');
    expect((await runQm(['whoami', '--token', alice], { env: { ...env, QM_TOKEN: ADMIN_TOKEN } })).stdout).toContain('alice (role member of vision)');
    expect((await runQm(['--token', alice, 'whoami'], { env: { ...env, QM_TOKEN: ADMIN_TOKEN } })).stdout).toContain('alice');
    const out = await runQm(['logout'], { env });
    expect(out.code).toBe(0);
    expect(readFileSync(join(dir, 'alice-config', 'quartermaster', 'config.yaml'), 'utf8')).not.toMatch(/^token:/m);
    expect(await runQm(['whoami'], { env })).toMatchObject({ code: 1, stderr: 'qm: no token configured: run qm login --server URL --token TOKEN (or set QM_SERVER and QM_TOKEN)\n' });
  });

  it('refuses a bad token or a team the token may not act for, and writes nothing', async () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'never-config') };
    const bad = await runQm(['login', '--server', h.url, '--token', 'not-a-token'], { env });
    expect(bad).toMatchObject({ code: 1, stdout: '', stderr: 'qm: the token is not valid (unknown or revoked) (run qm login, or set QM_TOKEN)\n' });
    const team = await runQm(['login', '--server', h.url, '--token', alice, '--team', 'nlp'], { env });
    expect(team).toMatchObject({ code: 1, stderr: 'qm: alice may not act for team nlp (teams: vision)\n' });
    expect(() => statSync(join(dir, 'never-config', 'quartermaster', 'config.yaml'))).toThrow();
  });
});

describe("a researcher's first hour (member token, no TTY)", () => {
  let id: string;

  it('qm submit -f job.yaml prints the job id; the job is stored as the file says', async () => {
    const r = await runQm(['submit', '-f', join(dir, 'job.yaml')], { env: member });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    id = r.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const job = await h.request('GET', `/v1/jobs/${id}`);
    expect(job.body).toMatchObject({ name: 'llama-ft-7', team: 'vision', replicas: 2, acceleratorsPerReplica: 4, createdBy: 'alice', template: { image: 'ghcr.io/acme/llama-ft:1.4', command: ['python', 'train.py'] } });
  });

  it('qm submit -f - reads JSON from stdin; the same --idempotency-key returns the same job and says so', async () => {
    const json = JSON.stringify({ name: 'eval-3', team: 'vision', kind: 'eval', replicas: 1, acceleratorsPerReplica: 8, flavors: ['h100-80gb'], template: { image: 'busybox' } });
    const first = await runQm(['submit', '-f', '-', '--idempotency-key', 'eval-3-try-1'], { env: member, stdin: json });
    expect(first.code).toBe(0);
    const before = await h.counts();
    const again = await runQm(['submit', '-f', '-', '--idempotency-key', 'eval-3-try-1', '-o', 'json'], { env: member, stdin: json });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).id).toBe(first.stdout.trim());
    expect(again.stderr).toContain('nothing new was submitted');
    expect(await h.counts()).toEqual(before);
  });

  it('qm ls: a table with ID NAME TEAM STATE FLAVOR REPLICAS AGE POSITION ETA; -o json is the API objects', async () => {
    const r = await runQm(['ls'], { env: member });
    expect(r.code).toBe(0);
    const [head, ...rows] = r.stdout.trimEnd().split('\n');
    expect(head!.split(/\s+/)).toEqual(['ID', 'NAME', 'TEAM', 'STATE', 'FLAVOR', 'REPLICAS', 'AGE', 'POSITION', 'ETA']);
    expect(rows).toHaveLength(2);
    expect(rows.find((l) => l.startsWith(id))!.split(/\s{2,}/)).toEqual([id, 'llama-ft-7', 'vision', 'PENDING', 'h100-80gb', '2', expect.stringMatching(/^\d+ (s|min)/), '-', '-']);
    const json = JSON.parse((await runQm(['jobs', '-o', 'json'], { env: member })).stdout);
    expect(json.map((j: { name: string }) => j.name)).toEqual(['eval-3', 'llama-ft-7']);
    expect(json[1]).toMatchObject({ id, state: 'PENDING', pending: { code: null } });
    const filtered = JSON.parse((await runQm(['ls', '--state', 'running,succeeded', '-o', 'json'], { env: member })).stdout);
    expect(filtered).toEqual([]);
    const wide = await runQm(['ls', '-o', 'wide', '--kind', 'eval'], { env: member });
    expect(wide.stdout.split('\n')[0]!.split(/\s+/).slice(9)).toEqual(['KIND', 'PRIORITY', 'ACCELERATORS', 'REASON', 'SUBMITTED', 'BY']);
    expect(wide.stdout).toContain('alice');
  });

  it('qm why before and after a cycle: reason, position and an estimated start in words with the zone', async () => {
    const before = await runQm(['why', id], { env: member });
    expect(before.stdout).toContain('reason: not yet considered');
    // Fill the team's h100 quota with an admin job so that llama-ft-7 has to wait.
    const blocker = await h.request('POST', '/v1/jobs', { body: { name: 'blocker', team: 'vision', priority: 1000, replicas: 4, acceleratorsPerReplica: 4, flavors: ['h100-80gb'], expectedRuntimeSeconds: 7200, template: { image: 'x' } } });
    expect(blocker.status).toBe(201);
    try {
      await cycle();
      const why = await runQm(['why', 'llama-ft-7'], { env: member });
      expect(why.code).toBe(0);
      const job = (await h.request('GET', `/v1/jobs/${id}`)).body;
      expect(job.state).toBe('PENDING');
      expect(why.stdout).toContain(`reason: ${job.pending.code} — ${job.pending.message}`);
      expect(why.stdout).toContain(`position: ${job.pending.position} in the queue`);
      if (job.pending.estimatedStartAt !== null) {
        // The date is shown only when the start falls on another day than now (an estimate 2 h out, read after 22:00 UTC).
        expect(why.stdout).toMatch(/expected to start in about \d+ (h|min)( \d+ (min|s))? \((\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\)\./);
      } else {
        expect(why.stdout).toContain('no estimate:');
      }
      const json = JSON.parse((await runQm(['why', id, '-o', 'json'], { env: member })).stdout);
      expect(json).toEqual({ id, name: 'llama-ft-7', team: 'vision', state: 'PENDING', pending: job.pending });
    } finally {
      await h.request('DELETE', `/v1/jobs/${blocker.body.id}`);
    }
  });

  it('qm describe: spec, placement by node once admitted, transitions and events; -o json adds the events', async () => {
    await cycle();
    const r = await runQm(['describe', id], { env: member });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Name: +llama-ft-7\nID: +[0-9a-f-]{36}\nTeam: +vision\n/);
    expect(r.stdout).toContain('State:        ADMITTED');
    expect(r.stdout).toContain('Namespace:    vision (its pods, in Kubernetes mode)');
    expect(r.stdout).toMatch(/Placement:\n {2}NODE +REPLICAS +ACCELERATORS\n {2}gpu-\d +0,1 +8\n|Placement:\n {2}NODE +REPLICAS +ACCELERATORS\n {2}gpu-\d +\d +4\n {2}gpu-\d +\d +4\n/);
    expect(r.stdout).toContain('Transitions:');
    expect(r.stdout).toMatch(/\d\d:\d\d:\d\d UTC +PENDING +ADMITTED +cycle \d+: admitted 2 replica\(s\) on h100-80gb/);
    expect(r.stdout).toContain('job.admitted');
    const json = JSON.parse((await runQm(['describe', id, '-o', 'json'], { env: member })).stdout);
    expect(json).toMatchObject({ id, state: 'ADMITTED', allocation: expect.any(Array), events: expect.arrayContaining([expect.objectContaining({ kind: 'job.admitted' })]) });
  });

  it('qm cancel: cancels, says so, and is idempotent', async () => {
    const r = await runQm(['cancel', id], { env: member });
    expect(r).toMatchObject({ code: 0, stdout: `${id} vision/llama-ft-7: cancelled (was ADMITTED)\n` });
    expect((await h.request('GET', `/v1/jobs/${id}`)).body.state).toBe('CANCELLED');
    expect((await runQm(['cancel', id], { env: member })).stdout).toBe(`${id} vision/llama-ft-7: already cancelled\n`);
  });

  it('qm submit --wait prints each state change until the job runs, then exits 0', async () => {
    const run = startQm(['submit', '-f', join(dir, 'job.yaml'), '--wait', '--poll-interval', '0.1s'], { env: member });
    await until('the job id', () => /^[0-9a-f-]{36}\n/.test(run.output()));
    const waitId = run.output().split('\n')[0]!;
    await until('the first state line', () => run.output().includes('PENDING'));
    await cycle();
    await until('the admission', () => run.output().includes('ADMITTED'));
    const report = await h.request('POST', `/v1/jobs/${waitId}/status`, { body: { state: 'RUNNING' } });
    expect(report.status).toBe(200);
    const r = await run.result;
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(waitId);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d UTC {2}PENDING: waiting for the next scheduling cycle$/);
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d UTC {2}ADMITTED with 2 replica\(s\) on h100-80gb$/));
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d UTC {2}RUNNING with 2 replica\(s\) on h100-80gb$/);
    await h.request('DELETE', `/v1/jobs/${waitId}`);
  });

  it('qm submit --wait exits 1 when the job is cancelled while it waits', async () => {
    const run = startQm(['submit', '-f', join(dir, 'job.yaml'), '--wait', '--poll-interval', '0.1s'], { env: member });
    await until('the job id', () => /^[0-9a-f-]{36}\n/.test(run.output()));
    await h.request('DELETE', `/v1/jobs/${run.output().split('\n')[0]!}`);
    const r = await run.result;
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/UTC {2}CANCELLED$/);
  });

  it('a member cannot set quotas or see another team\'s jobs: one line from the problem detail, exit 1', async () => {
    const q = await runQm(['quota', 'set', 'vision', 'h100-80gb', '--nominal', '64'], { env: member });
    expect(q).toMatchObject({ code: 1, stdout: '', stderr: 'qm: alice is a member; this needs an admin token\n' });
    const other = await runQm(['ls', '--team', 'nlp'], { env: member });
    expect(other).toMatchObject({ code: 1, stderr: 'qm: alice may not list jobs of team nlp\n' });
  });
});

describe("an infra lead's first hour (admin, config file from qm login)", () => {
  it('qm flavors, nodes and teams as tables and as JSON', async () => {
    const flavors = await runQm(['flavors'], { env: admin });
    expect(flavors.stdout.split('\n')[0]!.split(/\s+/)).toEqual(['NAME', 'KIND', 'RESOURCE', 'MEMORY', 'SPEED', 'COST/H']);
    expect(flavors.stdout).toMatch(/h100-80gb +nvidia-gpu +nvidia\.com\/gpu +80 GiB +2 +4\.00/);
    const nodes = JSON.parse((await runQm(['nodes', '-o', 'json'], { env: admin })).stdout);
    expect(nodes.map((n: { name: string }) => n.name)).toEqual(['gpu-1', 'gpu-2']);
    const teams = await runQm(['teams'], { env: admin });
    expect(teams.stdout).toMatch(/nlp +research +2 +LowerPriority +Any +h100-80gb \d+\/16/);
    const yaml = await runQm(['teams', '-o', 'yaml'], { env: admin });
    expect(yaml.stdout).toContain('- name: nlp\n  cohort: research\n');
  });

  it('qm quota set keeps limits not given, writes an audit event; qm quota ls shows it', async () => {
    const r = await runQm(['quota', 'set', 'vision', 'h100-80gb', '--nominal', '24'], { env: admin });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^quota vision\/h100-80gb: nominal 24, borrowing 8, lending none, CPU millis none, memory MiB none \(was nominal 16, borrowing 8, lending none, CPU millis none, memory MiB none; audit event \d+\)\n$/,
    );
    // A CPU cap alone keeps the rest; a cap that is not a number is a usage error, and nothing changes.
    const capped = await runQm(['quota', 'set', 'vision', 'h100-80gb', '--cpu-millis-limit', '192000'], { env: admin });
    expect(capped.stdout).toMatch(/^quota vision\/h100-80gb: nominal 24, borrowing 8, lending none, CPU millis 192000, memory MiB none \(was /);
    const bad = await runQm(['quota', 'set', 'vision', 'h100-80gb', '--memory-mib-limit', '2Gi'], { env: admin });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--memory-mib-limit '2Gi'");
    const uncapped = await runQm(['quota', 'set', 'vision', 'h100-80gb', '--cpu-millis-limit', 'none'], { env: admin });
    expect(uncapped.stdout).toMatch(/CPU millis none, memory MiB none \(was nominal 24, borrowing 8, lending none, CPU millis 192000, memory MiB none;/);
    const created = await runQm(['quota', 'set', 'nlp', 'a100-80gb', '--nominal', '8', '--lending-limit', '4'], { env: admin });
    expect(created.stdout).toMatch(/nominal 8, borrowing none, lending 4, CPU millis none, memory MiB none \(was none;/);
    const ls = await runQm(['quota', 'ls', '--team', 'vision', '-o', 'json'], { env: admin });
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ team: 'vision', flavor: 'h100-80gb', nominal: 24, borrowingLimit: 8, lendingLimit: null })]);
    const table = await runQm(['quota', 'ls'], { env: admin });
    expect(table.stdout.split('\n')[0]!.split(/\s+/)).toEqual(['TEAM', 'FLAVOR', 'NOMINAL', 'BORROWING-LIMIT', 'LENDING-LIMIT', 'USED', 'BORROWED', 'LENT', 'PENDING', 'CPU-M', 'MEMORY-MIB']);
    expect(table.stdout).toMatch(/vision +h100-80gb +24 +8 +none +\d+ +\d+ +\d+ +\d+ +\d+\/none +\d+\/none/);
    const events = await h.pg.query(`SELECT kind, actor FROM events WHERE kind LIKE 'quota.%' ORDER BY id DESC LIMIT 2`);
    expect(events.rows).toEqual([{ kind: 'quota.created', actor: 'admin' }, { kind: 'quota.updated', actor: 'admin' }]);
    const rm = await runQm(['quota', 'rm', 'nlp', 'a100-80gb'], { env: admin });
    expect(rm.stdout).toMatch(/^quota nlp\/a100-80gb deleted \(audit event \d+\)\n$/);
  });

  it('qm ls --all-teams lists every team\'s jobs for an admin', async () => {
    const r = JSON.parse((await runQm(['ls', '--all-teams', '-o', 'json', '--limit', '500'], { env: admin })).stdout);
    expect(new Set(r.map((j: { team: string }) => j.team))).toEqual(new Set(['vision']));
    expect(r.length).toBeGreaterThanOrEqual(4);
  });
});
