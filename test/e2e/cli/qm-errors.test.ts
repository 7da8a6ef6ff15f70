import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, closedPort, type QmResult, runQm } from './qm-process.js';

/**
 * Bad input to the real `qm`: unknown flags, unreadable or invalid job files, jobs the API refuses, a
 * server that is down. Every error is one line on stderr, nothing on stdout, the documented exit code
 * (2 bad input — ours or the API's 400/422 —, 1 failure), and nothing is written.
 */
let h: Harness;
let dir: string;
let env: Record<string, string>;

const oneLine = (r: QmResult, code: number, stderr: string | RegExp): void => {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: '' });
  expect(r.stderr.split('\n')).toHaveLength(2); // one line, then the final newline
  if (typeof stderr === 'string') expect(r.stderr).toBe(`${stderr}\n`);
  else expect(r.stderr).toMatch(stderr);
};

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_errors');
  await seedTenancy(h);
  dir = mkdtempSync(join(tmpdir(), 'qm-errors-'));
  env = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'config') };
  const files: Record<string, string> = {
    'broken.yaml': 'name: llama\nreplicas: [1, 2\n',
    'list.yaml': '- name: a\n- name: b\n',
    'two.yaml': 'name: a\n---\nname: b\n',
    'empty.yaml': '\n# nothing here\n',
    'broken.json': '{"name": "x",}',
    'invalid.yaml': 'name: Not_A_Label\nteam: vision\nreplicas: 0\nacceleratorsPerReplica: 4\nflavors: [h100-80gb]\ntemplate: { image: x }\nbogus: 1\n',
    'unknown-flavor.yaml': 'name: x\nteam: vision\nreplicas: 1\nacceleratorsPerReplica: 4\nflavors: [tpu-v9]\ntemplate: { image: x }\n',
    'other-team.yaml': 'name: x\nteam: nlp\nreplicas: 1\nacceleratorsPerReplica: 4\nflavors: [h100-80gb]\ntemplate: { image: x }\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  mkdirSync(join(dir, 'a-directory'));
});

afterAll(async () => {
  await h?.close();
});

describe('usage errors exit 2', () => {
  it.each([
    [['ls', '--frobnicate'], "qm: unknown option '--frobnicate' (run with --help for usage)"],
    [['frobnicate'], "qm: unknown command 'frobnicate' (run with --help for usage)"],
    [['submit'], 'qm: give a job file with -f FILE, or the job as flags: --name, --gpus and --image (see qm submit --help)'],
    [['describe'], "qm: missing required argument 'job' (run with --help for usage)"],
    [['ls', '-o', 'xml'], 'qm: -o xml: expected one of table, wide, name, json, yaml'],
    [['ls', '--state', 'sleeping'], "qm: --state 'sleeping': expected one of pending, admitted, binding, running, succeeded, failed, cancelled, preempted (comma-separated)"],
    [['ls', '--limit', '0'], "qm: --limit '0': expected a positive integer"],
    [['ls', '--team', 'vision', '--all-teams'], 'qm: use either --team or --all-teams'],
    [['quota', 'set', 'vision', 'h100-80gb'], 'qm: give --nominal, --borrowing-limit, --lending-limit, --cpu-millis-limit or --memory-mib-limit'],
    [['quota', 'set', 'vision', 'h100-80gb', '--nominal', 'lots'], "qm: --nominal 'lots': expected a non-negative integer, or none for no limit"],
    [['--server', 'localhost:8080', 'whoami'], "qm: --server 'localhost:8080' must be an http:// or https:// URL"],
    [['submit', '-f', 'x.yaml', '--wait-timeout', '10m'], 'qm: --wait-timeout only applies with --wait'],
    [['completion', 'tcsh'], "qm: completion 'tcsh': expected bash, zsh or fish"],
  ])('qm %j', async (args, message) => {
    oneLine(await runQm(args, { env, cwd: dir }), 2, message);
  });
});

describe('bad job files and jobs the API refuses (400/422) exit 2, other failures 1; one line, nothing written', () => {
  let before: Record<string, number>;
  beforeAll(async () => {
    before = await h.counts();
  });
  afterAll(async () => {
    expect(await h.counts()).toEqual(before);
  });

  it.each([
    ['missing.yaml', 1, 'qm: cannot read job file missing.yaml: no such file'],
    ['a-directory', 1, 'qm: cannot read job file a-directory: it is a directory'],
    ['broken.yaml', 2, /^qm: broken\.yaml: line 3, column 1: .+\n$/],
    ['broken.json', 2, 'qm: broken.json: line 1, column 14: Expected double-quoted property name'],
    ['list.yaml', 2, 'qm: list.yaml: expected a job (a mapping with name, team, replicas, …), got a list'],
    ['two.yaml', 2, 'qm: two.yaml holds 2 documents; qm submit takes one job per file'],
    ['empty.yaml', 2, 'qm: empty.yaml is empty: expected a job in YAML or JSON (see qm submit --help)'],
    [
      'invalid.yaml',
      2,
      "qm: invalid request: bogus: is not a known field; name: must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters); replicas: must be ≥ 1",
    ],
    ['unknown-flavor.yaml', 2, 'qm: flavors[0]: unknown flavor: tpu-v9'],
    ['other-team.yaml', 1, 'qm: alice may not submit jobs for team nlp'],
  ])('qm submit -f %s exits %d', async (file, code, message) => {
    oneLine(await runQm(['submit', '-f', file], { env, cwd: dir }), code, message);
  });

  it('empty stdin', async () => {
    oneLine(await runQm(['submit', '-f', '-'], { env, stdin: '' }), 2, 'qm: stdin is empty: expected a job in YAML or JSON (see qm submit --help)');
  });

  it('a 400 from a listing (a malformed name in a query) exits 2 too; cancel exits 2 only when every failure was bad input', async () => {
    oneLine(await runQm(['why', 'Not_A_Name'], { env }), 2, /^qm: invalid request: name: must be a DNS-1123 label/);
    const bad = await runQm(['cancel', 'Not_A_Name'], { env });
    expect(bad.code).toBe(2);
    const mixed = await runQm(['cancel', 'Not_A_Name', 'no-such-job'], { env });
    expect(mixed.code).toBe(1);
    expect(mixed.stderr.trimEnd().split('\n')).toHaveLength(2);
  });

  it('unknown job, or a name no job has', async () => {
    oneLine(await runQm(['describe', '00000000-0000-4000-8000-000000000000'], { env }), 1, 'qm: job 00000000-0000-4000-8000-000000000000 does not exist');
    oneLine(await runQm(['why', 'no-such-job'], { env }), 1, 'qm: no job named no-such-job; use its id (qm ls shows ids)');
    oneLine(await runQm(['quota', 'ls', '--team', 'ghosts'], { env }), 1, 'qm: team ghosts does not exist');
  });

  it('cancel of several jobs goes on past a failure and exits 1', async () => {
    const r = await runQm(['cancel', '00000000-0000-4000-8000-000000000000', 'no-such-job'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'qm: 00000000-0000-4000-8000-000000000000: job 00000000-0000-4000-8000-000000000000 does not exist',
      'qm: no-such-job: no job named no-such-job; use its id (qm ls shows ids)',
    ]);
  });

  it('a server that is down: connection refused, whatever the command, and login writes no config', async () => {
    const port = await closedPort();
    const down = { ...env, QM_SERVER: `http://127.0.0.1:${port}` };
    const message = `qm: cannot reach the Quartermaster API at http://127.0.0.1:${port}: connection refused (is it running? check --server, QM_SERVER or qm login)`;
    oneLine(await runQm(['ls'], { env: down }), 1, message);
    oneLine(await runQm(['submit', '-f', join(dir, 'other-team.yaml')], { env: down }), 1, message);
    oneLine(await runQm(['login', '--server', `http://127.0.0.1:${port}`, '--token', 'x'], { env: down }), 1, message);
    oneLine(await runQm(['whoami'], { env: { XDG_CONFIG_HOME: join(dir, 'config') } }), 1, 'qm: no server and token configured: run qm login --server URL --token TOKEN (or set QM_SERVER and QM_TOKEN)');
  });

  it('something that is not the API answering', async () => {
    oneLine(await runQm(['ls'], { env: { ...env, QM_SERVER: `${h.url}/docs` } }), 1, 'qm: no such route: is --server the base URL of the Quartermaster API (e.g. http://localhost:8080)?');
  });
});
