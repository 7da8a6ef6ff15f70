import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, type Harness, memberToken, startHarness } from '../api/harness.js';
import { buildQm, runQm, type QmResult } from './qm-process.js';

/**
 * An infra lead's first hour without curl: flavors, a cohort, teams and nodes created, changed and deleted
 * with the real `qm` binary (no TTY) against the real API over a fresh, empty database.
 */
let h: Harness;
let admin: Record<string, string>;

const qm = (...args: string[]): Promise<QmResult> => runQm(args, { env: admin });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
const json = async (...args: string[]): Promise<any> => {
  const r = await qm(...args, '-o', 'json');
  if (r.code !== 0) throw new Error(`qm ${args.join(' ')} → ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
/** Exit code and one line on stderr, nothing on stdout. */
function failed(r: QmResult, code: 1 | 2, line: string | RegExp): void {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: '' });
  expect(r.stderr.split('\n')).toHaveLength(2);
  if (typeof line === 'string') expect(r.stderr).toBe(`qm: ${line}\n`);
  else expect(r.stderr).toMatch(line);
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_tenancy');
  admin = { QM_SERVER: h.url, QM_TOKEN: ADMIN_TOKEN, XDG_CONFIG_HOME: join(mkdtempSync(join(tmpdir(), 'qm-tenancy-')), 'config') };
});

afterAll(async () => {
  await h?.close();
});

describe('qm flavor / cohort / team / node set: create, then change only what is given', () => {
  it('builds a small cluster from nothing', async () => {
    expect(await qm('flavor', 'set', 'h100', '--kind', 'nvidia-gpu', '--node-label', 'nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3', '--memory-gib', '80', '--relative-speed', '2', '--cost-per-hour', '4')).toEqual({
      code: 0,
      stdout: 'flavor h100 created: nvidia-gpu (nvidia.com/gpu), 80 GiB, speed 2, 4 per accelerator-hour\n',
      stderr: '',
    });
    expect((await qm('flavor', 'set', 'h100', '--cost-per-hour', '3.5')).stdout).toBe('flavor h100 updated: nvidia-gpu (nvidia.com/gpu), 80 GiB, speed 2, 3.5 per accelerator-hour\n');
    expect(await json('flavors')).toEqual([expect.objectContaining({ name: 'h100', memoryGiB: 80, relativeSpeed: 2, costPerHour: 3.5, nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } })]);
    // The price change is in the flavor's price history.
    expect((await h.request('GET', '/v1/flavors/h100/prices')).body.items.map((p: { costPerHour: number }) => p.costPerHour)).toEqual([4, 3.5]);

    expect((await qm('cohort', 'set', 'research', '--description', 'research pool')).stdout).toBe('cohort research created\n');
    expect((await qm('team', 'set', 'vision', '--cohort', 'research', '--fair-share-weight', '2')).stdout).toBe(
      'team vision created: cohort research, fair-share weight 2, preemption within team LowerPriority, reclaim within cohort Any, highest priority class the default\n',
    );
    // A second set changes only what it names (PATCH): the cohort and the weight stay.
    expect((await qm('team', 'set', 'vision', '--within-team', 'never')).stdout).toBe(
      'team vision updated: cohort research, fair-share weight 2, preemption within team Never, reclaim within cohort Any, highest priority class the default\n',
    );
    expect((await qm('team', 'set', 'nlp', '--cohort', 'research')).code).toBe(0);
    expect((await qm('cohorts')).stdout).toMatch(/^NAME\s+MEMBERS\s+USED\/CAPACITY\s+DESCRIPTION\nresearch\s+nlp, vision\s+-\s+research pool\n$/);

    expect((await qm('node', 'set', 'gpu-1', '--flavor', 'h100', '--accelerators', '8', '--cpu-millis', '96000', '--memory-mib', '1048576', '--zone', 'z1', '--block', 'b1')).stdout).toBe(
      'node gpu-1 added: 8 × h100, zone z1, block b1, takes new work\n',
    );
    expect((await qm('node', 'set', 'gpu-1', '--schedulable', 'no', '--block', 'none')).stdout).toBe('node gpu-1 updated: 8 × h100, zone z1, cordoned (takes no new work)\n');
    expect(await json('nodes')).toEqual([expect.objectContaining({ name: 'gpu-1', accelerators: 8, cpuMillis: 96000, topology: { zone: 'z1' }, schedulable: false })]);
    expect((await qm('quota', 'set', 'vision', 'h100', '--nominal', '8')).code).toBe(0);
    expect(await json('team', 'set', 'vision', '--fair-share-weight', '3')).toMatchObject({ name: 'vision', cohort: 'research', fairShareWeight: 3, preemption: { withinTeam: 'Never' }, quotas: [{ flavor: 'h100', nominal: 8 }] });
  });

  it('flavor topology label keys: set per level, kept by other changes, reset to the kind\'s default, refused when not a label key', async () => {
    expect(
      await qm('flavor', 'set', 'v5p', '--kind', 'google-tpu', '--topology-label', 'domain=example.com/slice', '--topology-label', 'tpu-shape=example.com/slice-shape'),
    ).toEqual({
      code: 0,
      stdout:
        'flavor v5p created: google-tpu (google.com/tpu), memory unknown, speed 1, 0 per accelerator-hour\n' +
        'topology from node labels: zone topology.kubernetes.io/zone, block cloud.google.com/gce-topology-block, domain example.com/slice, tpuShape example.com/slice-shape\n',
      stderr: '',
    });
    const topologyOf = async (): Promise<unknown> => (await h.request('GET', '/v1/flavors/v5p')).body.topologyLabels;
    // Another change keeps them (the PUT sends them back); one level changes, the others stay.
    expect((await qm('flavor', 'set', 'v5p', '--cost-per-hour', '9')).code).toBe(0);
    expect((await qm('flavor', 'set', 'v5p', '--topology-label', 'zone=example.com/region')).code).toBe(0);
    expect(await topologyOf()).toEqual({ zone: 'example.com/region', block: 'cloud.google.com/gce-topology-block', domain: 'example.com/slice', tpuShape: 'example.com/slice-shape' });
    // default: back to the kind's key.
    expect((await json('flavor', 'set', 'v5p', '--topology-label', 'domain=default')).topologyLabels).toEqual({
      zone: 'example.com/region',
      block: 'cloud.google.com/gce-topology-block',
      domain: 'cloud.google.com/gke-nodepool',
      tpuShape: 'example.com/slice-shape',
    });
    const before = await h.counts();
    failed(await qm('flavor', 'set', 'v5p', '--topology-label', 'rack=example.com/rack'), 2, /^qm: --topology-label 'rack=example.com\/rack': expected level=key with level one of zone, block, domain, tpuShape/);
    failed(await qm('flavor', 'set', 'v5p', '--topology-label', 'domain='), 2, "--topology-label 'domain=': give a node label key, or default for the kind's");
    failed(await qm('flavor', 'set', 'v5p', '--topology-label', 'domain=not a key!'), 2, /^qm: invalid request: topologyLabels\.domain: must be a Kubernetes label key/);
    expect(await topologyOf()).toMatchObject({ domain: 'cloud.google.com/gke-nodepool' });
    expect(await h.counts()).toEqual(before);
    expect((await qm('flavor', 'rm', 'v5p')).code).toBe(0);
  });

  it("--allow-*: the team's pod policy, one list per flag (comma-separated, none empties it); the others keep theirs", async () => {
    const set = await qm('team', 'set', 'vision', '--allow-service-accounts', 'trainer', '--allow-secrets', 'wandb-key,registry-creds', '--allow-nfs-servers', '*');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('pod templates may reference: ServiceAccounts trainer; Secrets wandb-key, registry-creds; ConfigMaps none; PVCs none; NFS servers *; tolerated taint keys none');
    await json('team', 'set', 'vision', '--allow-secrets', 'none', '--allow-pvcs', 'datasets');
    expect((await json('team', 'set', 'vision', '--allow-tolerations', 'example.com/reserved')).podPolicy).toEqual({
      serviceAccounts: ['trainer'],
      secrets: [],
      configMaps: [],
      persistentVolumeClaims: ['datasets'],
      nfsServers: ['*'],
      tolerations: ['example.com/reserved'],
    });
    const ns = await qm('team', 'set', 'vision', '--namespaces', 'cv-train,cv-eval');
    expect(ns.stdout).toContain('takes workloads from namespaces: cv-train, cv-eval\n');
    expect((await json('team', 'set', 'vision', '--namespaces', 'none')).namespaces).toEqual(['vision']);
    const before = await h.counts();
    failed(await qm('team', 'set', 'vision', '--namespaces', 'a,'), 2, "--namespaces 'a,': expected comma-separated names, or none");
    failed(await qm('team', 'set', 'vision', '--allow-secrets', 'a,,b'), 2, "--allow-secrets 'a,,b': expected comma-separated names, or none");
    failed(await qm('team', 'set', 'vision', '--allow-config-maps', 'Not_A_Name'), 2, /^qm: invalid request: podPolicy\.configMaps: each must be a DNS-1123 subdomain or '\*'/);
    expect(await h.counts()).toEqual(before);
  });

  it('bad input: exit 2 with one line, and nothing written', async () => {
    const before = await h.counts();
    failed(await qm('flavor', 'set', 'a100'), 2, 'flavor a100 does not exist yet: --kind is required (nvidia-gpu, aws-trainium, intel-gaudi, google-tpu)');
    failed(await qm('flavor', 'set', 'a100', '--kind', 'amd-gpu'), 2, "--kind 'amd-gpu': expected one of nvidia-gpu, aws-trainium, intel-gaudi, google-tpu");
    failed(await qm('flavor', 'set', 'h100', '--cost-per-hour', 'cheap'), 2, "--cost-per-hour 'cheap': expected a non-negative number");
    failed(await qm('flavor', 'set', 'h100', '--node-label', 'oops'), 2, /^qm: --node-label 'oops': expected key=value/);
    failed(await qm('team', 'set', 'vision'), 2, 'give at least one setting to change (see qm team set --help)');
    failed(await qm('team', 'set', 'vision', '--within-team', 'Sometimes'), 2, "--within-team 'Sometimes': expected one of Never, LowerPriority, LowerOrNewerEqualPriority");
    failed(await qm('team', 'set', 'vision', '--fair-share-weight', '0'), 2, "--fair-share-weight '0': expected a positive integer");
    failed(await qm('node', 'set', 'gpu-9', '--flavor', 'h100'), 2, 'node gpu-9 does not exist yet: --accelerators, --cpu-millis, --memory-mib required');
    failed(await qm('node', 'set', 'gpu-1', '--schedulable', 'maybe'), 2, "--schedulable 'maybe': expected yes or no");
    failed(await qm('team', 'rm'), 2, "missing required argument 'name' (run with --help for usage)");
    // Refused by the API with a 400/422 naming the field: bad input too, exit 2 with its detail.
    failed(await qm('team', 'set', 'vision', '--cohort', 'ghost'), 2, 'cohort: unknown cohort: ghost');
    failed(await qm('node', 'set', 'gpu-9', '--flavor', 'ghost', '--accelerators', '8', '--cpu-millis', '1000', '--memory-mib', '1024'), 2, 'flavor: unknown flavor: ghost');
    failed(await qm('team', 'set', 'vision', '--fair-share-weight', '5000'), 2, /^qm: invalid request: fairShareWeight: /);
    expect(await h.counts()).toEqual(before);
  });
});

describe('qm token: an admin hands a researcher a token without curl', () => {
  it('create (secret shown once), the researcher logs in with it, ls without secrets, revoke', async () => {
    const created = await qm('token', 'create', 'bob', '--teams', 'vision', '-o', 'token');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^qm_[\w-]+$/);
    const bob = { XDG_CONFIG_HOME: join(mkdtempSync(join(tmpdir(), 'qm-bob-')), 'config') };
    expect(await runQm(['login', '--server', h.url, '--token', '-'], { env: bob, stdin: `${secret}\n` })).toMatchObject({ code: 0 });
    expect(await runQm(['whoami'], { env: bob })).toMatchObject({ code: 0, stdout: `bob (role member of vision) at ${h.url}\n` });

    const text = await qm('token', 'create', 'runner-1', '--role', 'executor', '--teams', 'vision,nlp');
    expect(text.stdout).toMatch(/^token [0-9a-f-]{36} for runner-1 \(role executor of vision, nlp\):\nqm_[\w-]+\nThis secret is shown once\. runner-1 logs in with: qm login --server http:\/\/127\.0\.0\.1:\d+ --token -\n$/);
    const listed = await json('token', 'ls');
    expect(listed.map((t: { subject: string; role: string; teams: string[] }) => [t.subject, t.role, t.teams])).toEqual(
      expect.arrayContaining([['bob', 'member', ['vision']], ['runner-1', 'executor', ['vision', 'nlp']]]),
    );
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect((await qm('token', 'ls')).stdout).toMatch(/^ID\s+SUBJECT\s+ROLE\s+TEAMS\s+CREATED\s+REVOKED\n/);

    const id = listed.find((t: { subject: string }) => t.subject === 'bob').id as string;
    expect(await qm('token', 'revoke', id)).toEqual({ code: 0, stdout: `token ${id} revoked\n`, stderr: '' });
    failed(await runQm(['whoami'], { env: bob }), 1, /^qm: .*\(run qm login, or set QM_TOKEN\)\n$/);
    expect((await json('token', 'ls')).find((t: { id: string }) => t.id === id).revokedAt).toEqual(expect.any(String));
  });

  it('bad input: exit 2 for usage, exit 1 for what the API refuses; nothing written', async () => {
    const before = await h.counts();
    failed(await qm('token', 'create', 'carol'), 2, 'a member token acts for teams: give --teams, e.g. --teams vision');
    failed(await qm('token', 'create', 'carol', '--role', 'root', '--teams', 'vision'), 2, "--role 'root': expected one of member, executor, admin");
    failed(await qm('token', 'create', 'carol', '--role', 'admin', '--teams', 'vision'), 2, 'an admin token acts for every team: leave out --teams');
    failed(await qm('token', 'create', 'carol', '--teams', 'vision', '-o', 'xml'), 2, '-o xml: expected one of token, json, yaml');
    failed(await qm('token', 'create', 'carol', '--teams', 'ghost'), 2, 'teams: unknown team: ghost');
    const alice = await memberToken(h, 'alice-tokens', ['vision']);
    const counted = await h.counts();
    failed(await runQm(['token', 'create', 'mallory', '--teams', 'vision'], { env: { ...admin, QM_TOKEN: alice } }), 1, 'alice-tokens is a member; this needs an admin token');
    expect(await h.counts()).toEqual(counted);
    expect(counted.api_tokens).toBe(before.api_tokens! + 1);
  });
});

describe('qm priority-class: infra leads define the classes members choose from', () => {
  it('set creates and changes only what is given, one default; the team ceiling; members list them and cannot set them', async () => {
    expect(await qm('priority-classes')).toMatchObject({ code: 0, stdout: 'no priority classes: jobs run at priority 0 (an admin adds classes with qm priority-class set)\n' });
    failed(await qm('priority-class', 'set', 'high'), 2, 'priority class high does not exist yet: give its --value');
    failed(await qm('priority-class', 'set', 'high', '--value', '1.5'), 2, "--value '1.5': expected an integer from -1000000 to 1000000");
    expect((await qm('priority-class', 'set', 'standard', '--value', '0', '--default')).stdout).toBe('priority class standard created: value 0, the default\n');
    expect((await qm('priority-class', 'set', 'high', '--value', '1000', '--description', 'deadline-bound')).stdout).toBe('priority class high created: value 1000\n');
    expect((await qm('priority-class', 'set', 'high', '--value', '900')).stdout).toBe('priority class high updated: value 900\n');
    expect(await json('priority-classes')).toEqual([
      expect.objectContaining({ name: 'high', value: 900, description: 'deadline-bound', default: false }),
      expect.objectContaining({ name: 'standard', value: 0, default: true }),
    ]);
    expect((await qm('team', 'set', 'vision', '--max-priority-class', 'high')).stdout).toContain('highest priority class high\n');
    failed(await qm('priority-class', 'rm', 'high'), 1, /priority class high is the highest class of team\(s\) vision/);
    expect((await qm('team', 'set', 'vision', '--max-priority-class', 'none')).stdout).toContain('highest priority class the default\n');
    const member = { ...admin, QM_TOKEN: await memberToken(h, 'pat', ['vision']) };
    expect((await runQm(['priority-classes'], { env: member })).stdout).toMatch(/^NAME\s+VALUE\s+DEFAULT\s+DESCRIPTION\nhigh\s+900\s+-\s+deadline-bound\nstandard\s+0\s+yes\s+-\n$/);
    expect((await runQm(['priority-class', 'set', 'top', '--value', '5'], { env: member })).code).toBe(1);
    expect((await qm('priority-class', 'rm', 'high')).stdout).toBe('priority class high deleted\n');
  });
});

describe('job names: a resubmitted job is found by its name', () => {
  it('the one not finished among jobs of the same name is meant; two unfinished ones are refused with their ids', async () => {
    const job = 'name: retry-me\nteam: vision\nreplicas: 1\nacceleratorsPerReplica: 8\nflavors: [h100]\ntemplate: { image: busybox }\n';
    const first = (await runQm(['submit', '-f', '-'], { env: admin, stdin: job })).stdout.trim();
    expect((await qm('cancel', first)).code).toBe(0);
    const second = (await runQm(['submit', '-f', '-'], { env: admin, stdin: job })).stdout.trim();
    // Before: "2 jobs are named retry-me: …; use the id" for every command.
    expect((await json('describe', 'retry-me')).id).toBe(second);
    expect((await qm('why', 'retry-me')).stdout).toContain(`vision/retry-me (${second}) is PENDING`);
    const third = (await runQm(['submit', '-f', '-'], { env: admin, stdin: job })).stdout.trim();
    failed(await qm('why', 'retry-me'), 1, new RegExp(`^qm: 3 jobs are named retry-me: ${third} \\(pending, team vision\\), ${second} \\(pending, team vision\\), ${first} \\(cancelled, team vision\\) \\(2 of them not finished\\); use the id\\n$`));
    expect((await qm('cancel', second, third)).code).toBe(0);
  });
});

describe('qm X rm: refused with what still uses it (exit 1), then deleted in order', () => {
  it('a member cannot delete; an admin deletes once nothing is in the way', async () => {
    const alice = await memberToken(h, 'alice', ['vision']);
    failed(await runQm(['team', 'rm', 'vision'], { env: { ...admin, QM_TOKEN: alice } }), 1, /^qm: .*admin/);
    const before = await h.counts();
    failed(await qm('cohort', 'rm', 'research'), 1, 'cohort research still has member team(s) nlp, vision: move them out first (PATCH /v1/teams/{team} {"cohort": null}; qm team set TEAM --cohort none)');
    failed(await qm('flavor', 'rm', 'h100'), 1, 'flavor h100 is in use by 1 node(s), 1 quota(s) and 0 unfinished job(s); remove those first');
    failed(await qm('team', 'rm', 'vision'), 1, /^qm: team vision is still used by quota\(s\) for h100 \(.*qm quota rm vision FLAVOR\): remove those first\n$/);
    expect(await h.counts()).toEqual(before);

    expect(await qm('quota', 'rm', 'vision', 'h100')).toMatchObject({ code: 0 });
    // Who changed the quota, and when: the audit trail without curl (members see their teams').
    const trail = await json('audit', '--team', 'vision');
    expect(trail.filter((e: { kind: string }) => e.kind.startsWith('quota.')).map((e: { kind: string; actor: string }) => [e.kind, e.actor])).toEqual([['quota.deleted', 'admin'], ['quota.created', 'admin']]);
    expect(trail.at(-1)).toMatchObject({ kind: 'team.created', actor: 'admin', team: 'vision' }); // the team's own changes are in its trail too
    const table = await runQm(['audit'], { env: { ...admin, QM_TOKEN: alice } });
    expect(table.stdout).toMatch(/^WHEN\s+TEAM\s+KIND\s+BY\s+CHANGE\n\d\d:\d\d UTC\s+vision\s+quota\.deleted\s+admin\s+quota of team vision for h100 deleted by admin: /);
    failed(await qm('audit', '--limit', 'lots'), 2, "--limit 'lots': expected a positive integer");
    expect(await qm('team', 'rm', 'vision')).toEqual({ code: 0, stdout: 'team vision deleted\n', stderr: '' });
    expect((await qm('team', 'set', 'nlp', '--cohort', 'none')).stdout).toContain('team nlp updated: cohort none');
    expect(await qm('cohort', 'delete', 'research')).toEqual({ code: 0, stdout: 'cohort research deleted\n', stderr: '' });
    expect(await qm('node', 'rm', 'gpu-1')).toEqual({ code: 0, stdout: 'node gpu-1 deleted\n', stderr: '' });
    expect(await qm('flavor', 'rm', 'h100')).toEqual({ code: 0, stdout: 'flavor h100 deleted\n', stderr: '' });
    failed(await qm('team', 'rm', 'vision'), 1, 'team vision does not exist');
    expect(await json('teams')).toEqual([expect.objectContaining({ name: 'nlp', cohort: null })]);
    expect(await json('flavors')).toEqual([]);
  });
});
