import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, closedPort, QM_BIN, type QmResult, runQm } from './qm-process.js';

/**
 * Dynamic shell completion through the real `qm` against the real API: the hidden `qm __complete KIND PREFIX`
 * answers the names the caller may see (bounded, filtered by the prefix), and nothing, with exit 0, whenever
 * it cannot ask; the bash script calls it back where a job, team, flavor, node or cohort is named; the zsh and
 * fish scripts are well-formed (checked with the shell where it is installed).
 */
let h: Harness;
let dir: string;
let admin: Record<string, string>;
let member: Record<string, string>;
let executor: Record<string, string>;
let ids: Record<string, string>;

const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);
const words = (r: QmResult): string[] => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return r.stdout.split('\n').filter((l) => l !== '');
};
const complete = async (args: string[], env: Record<string, string>): Promise<string[]> => words(await runQm(['__complete', ...args], { env }));
const silent = (r: QmResult): void => expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
const which = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_completion');
  await seedTenancy(h);
  dir = mkdtempSync(join(tmpdir(), 'qm-completion-'));
  ids = {};
  for (const [name, team] of [['train-a', 'vision'], ['train-b', 'vision'], ['eval-c', 'vision'], ['nlp-run', 'nlp']] as const) {
    ids[name] = ((await ok('POST', '/v1/jobs', jobBody({ name, team }))) as { id: string }).id;
  }
  const runner = (await ok('POST', '/v1/tokens', { subject: 'runner-1', role: 'executor', teams: ['vision'] })) as { token: string };
  admin = { QM_SERVER: h.url, QM_TOKEN: ADMIN_TOKEN, XDG_CONFIG_HOME: join(dir, 'admin-config') };
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'member-config') };
  executor = { QM_SERVER: h.url, QM_TOKEN: runner.token, XDG_CONFIG_HOME: join(dir, 'executor-config') };
});
afterAll(async () => {
  await h?.close();
});

describe('qm __complete KIND PREFIX: the names the caller may see', () => {
  it('teams, flavors, nodes and cohorts, sorted, one a line, filtered by the prefix', async () => {
    expect(await complete(['team'], member)).toEqual(['nlp', 'vision']);
    expect(await complete(['team', 'v'], member)).toEqual(['vision']);
    expect(await complete(['flavor'], member)).toEqual(['a100-80gb', 'h100-80gb']);
    expect(await complete(['flavor', 'h1'], member)).toEqual(['h100-80gb']);
    expect(await complete(['node', 'gpu-'], admin)).toEqual(['gpu-1', 'gpu-2']);
    expect(await complete(['cohort'], admin)).toEqual(['research']);
    expect(await complete(['team', 'x'], admin)).toEqual([]);
  });

  it("jobs: the caller's teams only (a member), every team (an admin), the default team (QM_TEAM)", async () => {
    expect(await complete(['job'], member)).toEqual(['eval-c', 'train-a', 'train-b']);
    expect(await complete(['job', 'train'], member)).toEqual(['train-a', 'train-b']);
    expect(await complete(['job', 'nlp'], member)).toEqual([]);
    expect(await complete(['job'], admin)).toEqual(['eval-c', 'nlp-run', 'train-a', 'train-b']);
    expect(await complete(['job'], { ...admin, QM_TEAM: 'nlp' })).toEqual(['nlp-run']);
    expect(await complete(['job'], executor)).toEqual(['eval-c', 'train-a', 'train-b']);
  });

  it('jobs: job/NAME as -o name prints it; an id when the prefix matches no name', async () => {
    expect(await complete(['job', 'job/tr'], member)).toEqual(['job/train-a', 'job/train-b']);
    const id = ids['train-a']!;
    expect(await complete(['job', id.slice(0, 8)], member)).toEqual(expect.arrayContaining([id]));
    expect(await complete(['job', id.slice(0, 8)], member)).not.toContain(ids['nlp-run']);
  });

  it("an executor token, which may not list teams: its own teams", async () => {
    expect(await complete(['team'], executor)).toEqual(['vision']);
  });

  it('at most 100 names', async () => {
    for (let i = 0; i < 105; i++) {
      await ok('PUT', `/v1/nodes/bulk-${String(i).padStart(3, '0')}`, { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 });
    }
    const nodes = await complete(['node', 'bulk-'], admin);
    expect(nodes).toHaveLength(100);
    expect(nodes[0]).toBe('bulk-000');
  });

  it('silent, exit 0, whenever it cannot ask: API down, API not answering, no login, bad token, unknown kind', async () => {
    const port = await closedPort();
    silent(await runQm(['__complete', 'job'], { env: { ...member, QM_SERVER: `http://127.0.0.1:${port}` } }));

    // Accepts connections and never answers: qm gives up after its short limit, still silent.
    const sockets: Socket[] = [];
    const mute: Server = createServer((s) => void sockets.push(s));
    const mutePort = await new Promise<number>((resolve) => mute.listen(0, '127.0.0.1', () => resolve((mute.address() as { port: number }).port)));
    try {
      silent(await runQm(['__complete', 'team', 'v'], { env: { ...member, QM_SERVER: `http://127.0.0.1:${mutePort}` } }));
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => mute.close(resolve));
    }

    silent(await runQm(['__complete', 'job'], { env: { XDG_CONFIG_HOME: join(dir, 'nobody') } }));
    silent(await runQm(['__complete', 'job'], { env: { ...member, QM_TOKEN: 'qm_not-a-token' } }));
    silent(await runQm(['__complete', 'job'], { env: { ...member, QM_SERVER: 'not a url' } }));
    silent(await runQm(['__complete', 'priority'], { env: member }));
    silent(await runQm(['__complete'], { env: member }));
    silent(await runQm(['__complete', 'job', 'x', 'extra', '--frobnicate'], { env: member }));
  });

  it('hidden: not in qm --help nor among the words the scripts offer', async () => {
    expect((await runQm(['--help'])).stdout).not.toContain('__complete');
    const bash = (await runQm(['completion', 'bash'])).stdout;
    expect(bash).not.toMatch(/words="[^"]*__complete/);
  });
});

describe('qm completion bash calls qm back for names', () => {
  let script: string;
  let bin: string;
  beforeAll(async () => {
    const r = await runQm(['completion', 'bash']);
    expect(r.code).toBe(0);
    script = join(dir, 'qm.bash');
    writeFileSync(script, r.stdout);
    // `qm` on the PATH, as an installed copy is.
    bin = join(dir, 'bin');
    spawnSync('mkdir', ['-p', bin]);
    writeFileSync(join(bin, 'qm'), `#!/bin/sh\nexec "${process.execPath}" "${QM_BIN}" "$@"\n`);
    chmodSync(join(bin, 'qm'), 0o755);
  });

  /**
   * What Tab offers for the last of `line`'s words in bash, with `env`. Asynchronously: the API answering
   * `qm __complete` runs in this process.
   */
  const tab = async (line: string[], env: Record<string, string>): Promise<string[]> => {
    const child = spawn('bash', ['-c', `source "${script}"; COMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}; _qm; printf '%s\\n' "\${COMPREPLY[@]}"`], {
      env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: dir, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    await new Promise((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    return stdout.split('\n').filter((l) => l !== '').sort();
  };

  it('bash -n accepts the script', () => {
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
  });

  it('job names after describe, cancel, executor status; teams and flavors of quota set; --team values', async () => {
    expect(await tab(['qm', 'describe', ''], member)).toEqual(['eval-c', 'train-a', 'train-b']);
    expect(await tab(['qm', 'describe', '--team', 'vision', 'tr'], member)).toEqual(['train-a', 'train-b']);
    expect(await tab(['qm', 'cancel', 'train-a', 'tr'], member)).toEqual(['train-a', 'train-b']);
    expect(await tab(['qm', 'executor', 'status', 'ev'], executor)).toEqual(['eval-c']);
    expect(await tab(['qm', 'quota', 'set', 'v'], admin)).toEqual(['vision']);
    expect(await tab(['qm', 'quota', 'set', 'vision', 'h'], admin)).toEqual(['h100-80gb']);
    expect(await tab(['qm', 'ls', '--team', ''], admin)).toEqual(['nlp', 'vision']);
    expect(await tab(['qm', 'node', 'rm', 'gpu'], admin)).toEqual(['gpu-1', 'gpu-2']);
  });

  it('static words as before: commands and flags; the argument after its state is no name', async () => {
    expect(await tab(['qm', 'su'], admin)).toEqual(['submit']);
    expect(await tab(['qm', 'describe', '--te'], admin)).toEqual(['--team']);
    expect(await tab(['qm', 'executor', 's'], admin)).toEqual(['status']);
    expect(await tab(['qm', 'executor', 'status', 'train-a', 'r'], admin)).toEqual([]);
  });

  it('with the API down: no names and no error', async () => {
    expect(await tab(['qm', 'describe', 'tr'], { ...member, QM_SERVER: 'http://127.0.0.1:9' })).toEqual([]);
  });
});

describe('qm completion zsh and fish', () => {
  it('zsh: names from qm __complete where a job, team, flavor, node or cohort is named; zsh -n where zsh is installed', async () => {
    const r = await runQm(['completion', 'zsh']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("'1:job:_qm_names job'");
    expect(r.stdout).toContain('_qm_names team');
    expect(r.stdout).toContain('qm __complete "$1" "$PREFIX"');
    if (which('zsh')) {
      writeFileSync(join(dir, '_qm'), r.stdout);
      expect(spawnSync('zsh', ['-n', join(dir, '_qm')], { encoding: 'utf8' }).stderr).toBe('');
    }
  });

  it('fish: a completion per command, option and named argument; fish -n where fish is installed', async () => {
    const r = await runQm(['completion', 'fish']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const text = r.stdout;
    expect(text).toContain("complete -c qm -f -n '__qm_at \\'\\'' -a 'submit'");
    expect(text).toContain("complete -c qm -f -n '__qm_at \\'describe\\' 0 0' -a '(__qm_names job)'");
    expect(text).toContain("complete -c qm -f -n '__qm_at \\'cancel\\' 0' -a '(__qm_names job)'");
    expect(text).toContain("complete -c qm -n '__qm_at \\'ls\\'' -l team -x -a '(__qm_names team)'");
    expect(text).toContain("complete -c qm -n '__qm_at \\'ls\\'' -s o -l output -x -a 'table wide name json yaml'");
    expect(text).not.toMatch(/-a '__complete'/);
    if (which('fish')) {
      writeFileSync(join(dir, 'qm.fish'), text);
      const check = spawnSync('fish', ['-n', join(dir, 'qm.fish')], { encoding: 'utf8' });
      expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
    }
  });
});
