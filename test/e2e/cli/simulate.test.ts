import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { qmInProcess } from './simulate-support.js';

const qm = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => qmInProcess(args, { cwd, env: { QM_TRACES_DIR: join(cwd, 'traces'), ...env } });
const HEADER = 'timestamp,duration,num_gpus,gpu_time,cluster';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'qm-cli-'));
  writeFileSync(
    join(dir, 'cluster.yaml'),
    'flavors:\n  - { name: gpu }\n  - { name: h100-80gb, relativeSpeed: 2 }\nnodeGroups:\n  - { flavor: gpu, count: 2, acceleratorsPerNode: 8 }\n  - { flavor: h100-80gb, count: 1, acceleratorsPerNode: 8 }\n',
  );
  writeFileSync(join(dir, 'tenancy.yaml'), 'cohorts: [all]\nteams:\n  - { name: a, cohort: all, quotas: { gpu: 8, h100-80gb: 4 } }\n  - { name: b, cohort: all, quotas: { gpu: 8, h100-80gb: 4 } }\n');
  writeFileSync(join(dir, 'bad-tenancy.yaml'), 'teams:\n  - { name: a, quotas: { tpu-v5: 8 } }\n');
  writeFileSync(
    join(dir, 'trace.csv'),
    [
      HEADER,
      '2017-10-01 00:00:00,100.0,8,800.0,a',
      '2017-10-01 00:00:00,50.0,8,400.0,b',
      '2017-10-01 00:00:10,-40.0,8,-320.0,a',
      '2017-10-01 00:00:20,30,4',
      '2017-10-01 00:00:30,60,64,3840,b',
      '2017-10-01 00:00:40,60,4,240,a',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'noheader.csv'), '2017-10-01 00:00:00,100.0,8,800.0,a\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = (): string[] => ['simulate', '--trace-file', 'trace.csv', '--cluster', 'cluster.yaml', '--tenancy', 'tenancy.yaml', '--no-progress'];

describe('qm simulate: bad inputs', () => {
  it('reports malformed rows, negative durations and a gang larger than the cluster by line, and still simulates the rest', async () => {
    const r = await qm([...base(), '--json'], dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rejected).toEqual([
      { line: 4, source: 'trace.csv', reason: 'duration -40.0 is negative' },
      { line: 5, source: 'trace.csv', reason: 'expected 5 comma-separated fields, found 3' },
      {
        line: 6,
        source: 'trace.csv',
        reason: 'gang of 8 × 8 = 64 accelerators is larger than the cluster (gpu: 16 accelerators, room for 2 replicas; h100-80gb: 8 accelerators, room for 1 replicas)',
      },
    ]);
    expect(out.runs[0].metrics.overall).toMatchObject({ jobs: 3, completed: 3, rejected: 3 });
    expect(r.stderr).toContain('warning: trace.csv:4: duration -40.0 is negative (job rejected)');
    expect(r.stderr).toContain('warning: trace.csv:6: gang of 8 × 8 = 64 accelerators is larger than the cluster');
  });

  it('fails with exit 1 and the path when a file cannot be read', async () => {
    const r = await qm(['simulate', '--trace-file', 'missing.csv', '--cluster', 'cluster.yaml', '--tenancy', 'tenancy.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`qm: cannot read Philly trace ${join(dir, 'missing.csv')}: no such file\n`);
  });

  it('fails with exit 1 on a CSV without the Philly header', async () => {
    const r = await qm(['simulate', '--trace-file', 'noheader.csv', '--cluster', 'cluster.yaml', '--tenancy', 'tenancy.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("qm: noheader.csv:1: expected the header 'timestamp,duration,num_gpus,gpu_time,cluster'");
  });

  it('fails with exit 1 naming the field when the tenancy references an unknown flavor', async () => {
    const r = await qm(['simulate', '--trace-file', 'trace.csv', '--cluster', 'cluster.yaml', '--tenancy', 'bad-tenancy.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("qm: bad-tenancy.yaml: teams[0].quotas.tpu-v5: unknown flavor 'tpu-v5' (cluster has gpu, h100-80gb)\n");
  });

  it.each([
    [['--cycle-interval', 'soon'], "option '--cycle-interval <seconds>' argument 'soon' is invalid. must be a non-negative number"],
    [['--limit', '0'], "option '--limit <n>' argument '0' is invalid. must be a positive integer"],
    [['--policies', 'full,lottery'], "qm: unknown policy 'lottery' (known: full, fastest-free, fifo, one-per-queue, hetero-agnostic, no-preemption, no-reservation, or 'all')"],
    [['--trace', 'alibaba'], "option '--trace <kind>' argument 'alibaba' is invalid. Allowed choices are philly, gavel."],
    [['--quota', 'a=4'], "qm: --quota 'a=4': expected TEAM/FLAVOR=NOMINAL, e.g. vision/h100-80gb=48"],
    [['--nodes', 'h100-80gb=16'], "qm: --nodes 'h100-80gb=16': expected FLAVOR=+N or FLAVOR=-N, e.g. h100-80gb=+16"],
    [['--frobnicate'], "unknown option '--frobnicate'"],
  ])('rejects bad flags %j with exit 2', async (flags, message) => {
    const r = await qm([...base(), ...flags], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('fails with exit 1 when a what-if names an unknown flavor', async () => {
    const r = await qm([...base(), '--nodes', 'tpu=+4'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("qm: --nodes: unknown flavor 'tpu' (cluster has gpu, h100-80gb)\n");
  });
});

describe('qm simulate: runs', () => {
  it('compares policies in a table and writes the JSON and a self-contained HTML report', async () => {
    const r = await qm([...base(), '--policies', 'full,fifo,hetero-agnostic', '--out', 'out.json', '--report', 'report.html'], dir);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('policy '))).toContain('util%');
    for (const p of ['full', 'fifo', 'hetero-agnostic']) expect(lines.some((l) => l.startsWith(`${p} `))).toBe(true);
    const out = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
    expect(out.runs.map((x: { policy: string }) => x.policy)).toEqual(['full', 'fifo', 'hetero-agnostic']);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).toContain('Queueing delay CDF per team');
    expect(html).not.toMatch(/<script|<link|src="http/);
  });

  it('answers a what-if on the fleet with the difference per team', async () => {
    const r = await qm([...base(), '--nodes', 'h100-80gb=+1', '--json'], dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.whatIf[0].diff.changes).toEqual(['nodes h100-80gb+1']);
    expect(r.stderr).toContain("note (what-if): h100-80gb has 16 accelerators but the teams' nominal quotas sum to 8; the 8 beyond them are usable only if quotas grow (--quota)");
    expect(out.whatIf[0].diff.teams.map((t: { team: string }) => t.team)).toEqual(['a', 'b']);
  });

  it('rejects a malformed --since and --from-db mixed with trace files (exit 2)', async () => {
    expect(await qm(['simulate', '--from-db', '--since', 'a week'], dir)).toMatchObject({ code: 2, stderr: "qm: --since 'a week': expected a duration such as 7d, 12h, 30m\n" });
    expect((await qm(['simulate', '--from-db', '--trace-file', 'trace.csv'], dir)).code).toBe(2);
    expect((await qm(['simulate', '--since', '7d'], dir)).stderr).toBe('qm: --since only applies with --from-db\n');
  });
});

describe('qm simulate: the summary and report as a decision aid', () => {
  it('says loudly when trace teams are not in the tenancy file, and states its assumptions', async () => {
    writeFileSync(join(dir, 'only-a.yaml'), 'cohorts: [all]\nteams:\n  - { name: a, cohort: all, quotas: { gpu: 16, h100-80gb: 8 } }\n');
    const args = ['simulate', '--trace-file', 'trace.csv', '--cluster', 'cluster.yaml', '--tenancy', 'only-a.yaml', '--no-progress'];
    const warning = 'WARNING: 1 of 2 trace teams are not in the tenancy file only-a.yaml (b): their 2 jobs (50 % of the trace) are rejected and every figure leaves them out';
    const r = await qm(args, dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(warning);
    expect(r.stdout).toContain(warning);
    expect(r.stdout).toContain('assumptions:\n  - quotas from the tenancy file only-a.yaml\n  - no checkpoints: a preempted job restarts from zero');
    const json = JSON.parse((await qm([...args, '--json'], dir)).stdout);
    expect(json.input.warnings).toEqual([expect.stringContaining(warning.slice('WARNING: '.length))]);
    const ck = await qm([...args, '--checkpoint-interval', '600'], dir);
    expect(ck.stdout).toContain('every job checkpoints every 600 s: a preempted job keeps its progress up to its last checkpoint (no grace period');
    const grace = await qm([...args, '--checkpoint-interval', '600', '--checkpoint-grace', '120', '--json'], dir);
    expect(grace.code).toBe(0);
    const graced = JSON.parse(grace.stdout);
    expect(graced.input.checkpointGraceSeconds).toBe(120);
    expect(graced.input.assumptions).toContainEqual(expect.stringContaining('runs on for its 120 s grace period and checkpoints at its end'));
  });

  it('--ordering shortest-first orders every policy by least expected work and says so; an unknown order is a usage error', async () => {
    writeFileSync(join(dir, 'one-node.yaml'), 'flavors:\n  - { name: gpu }\nnodeGroups:\n  - { flavor: gpu, count: 1, acceleratorsPerNode: 8 }\n');
    writeFileSync(join(dir, 'one-team.yaml'), 'cohorts: [all]\nteams:\n  - { name: a, cohort: all, quotas: { gpu: 8 } }\n');
    // One 8-GPU node: a 100 s job runs, then a 1,000 s job and a 10 s job wait for it (the long one submitted first).
    writeFileSync(join(dir, 'order.csv'), [HEADER, '2017-10-01 00:00:00,100,8,800,a', '2017-10-01 00:00:01,1000,8,8000,a', '2017-10-01 00:00:02,10,8,80,a', ''].join('\n'));
    const args = ['simulate', '--trace-file', 'order.csv', '--cluster', 'one-node.yaml', '--tenancy', 'one-team.yaml', '--cycle-interval', '0', '--no-progress', '--json'];
    const fifo = JSON.parse((await qm(args, dir)).stdout);
    const sf = JSON.parse((await qm([...args, '--ordering', 'shortest-first'], dir)).stdout);
    expect(fifo.input.assumptions).toContainEqual(expect.stringContaining('queue order fifo'));
    expect(sf.input.assumptions).toContainEqual(expect.stringContaining('queue order shortest-first for every policy'));
    // FIFO: the 10 s job waits for both others (1,098 s); shortest-first: it waits 98 s, the long one 109 s.
    expect(fifo.runs[0].metrics.overall.queueingDelaySeconds.max).toBe(1098);
    expect(sf.runs[0].metrics.overall.queueingDelaySeconds.max).toBe(109);
    expect((await qm([...args, '--ordering', 'lifo'], dir)).code).toBe(2);
  });

  it('--slower-flavor-delay sets the weight of every policy and says so; a negative one is a usage error', async () => {
    writeFileSync(join(dir, 'one-node.yaml'), 'flavors:\n  - { name: gpu }\nnodeGroups:\n  - { flavor: gpu, count: 1, acceleratorsPerNode: 8 }\n');
    writeFileSync(join(dir, 'one-team.yaml'), 'cohorts: [all]\nteams:\n  - { name: a, cohort: all, quotas: { gpu: 8 } }\n');
    writeFileSync(join(dir, 'two.csv'), [HEADER, '2017-10-01 00:00:00,100,8,800,a', '2017-10-01 00:00:01,10,8,80,a', ''].join('\n'));
    const args = ['simulate', '--trace-file', 'two.csv', '--cluster', 'one-node.yaml', '--tenancy', 'one-team.yaml', '--no-progress', '--json'];
    const byDefault = JSON.parse((await qm(args, dir)).stdout);
    expect(byDefault.input.assumptions).toContainEqual(expect.stringContaining('finishes sooner by more than 3 × the delay its slower run causes the other waiting jobs'));
    expect(byDefault.input.assumptions).toContainEqual(expect.stringContaining('makes progress only 300 s after it starts again'));
    const off = JSON.parse((await qm([...args, '--slower-flavor-delay', '0'], dir)).stdout);
    expect(off.input.assumptions).toContainEqual(expect.stringContaining('by more than 0 × the delay'));
    const bad = await qm([...args, '--slower-flavor-delay', '-1'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--slower-flavor-delay <weight>' argument '-1' is invalid");
  });

  it('says loudly which trace teams got no quota when quotas are derived', async () => {
    mkdirSync(join(dir, 'traces', 'helios'), { recursive: true });
    writeFileSync(join(dir, 'traces', 'helios', 'philly_vc_nodes.csv'), 'vc,node num\na,2\n');
    const r = await qm(['simulate', '--trace-file', 'trace.csv', '--cluster', 'cluster.yaml', '--no-progress'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('WARNING: 1 of 2 trace teams are not in helios/philly_vc_nodes.csv (b): nominal quota 0, they run only on capacity other teams lend');
    expect(r.stdout).toContain("quotas derived (no --tenancy): one cohort with unlimited borrowing and lending; each flavor's accelerators split");
  });

  it('gives every policy a team table, useful utilization and lost accelerator-hours; the report keeps series apart and the tail readable', async () => {
    const r = await qm([...base(), '--policies', 'full,fifo', '--report', 'decision.html'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').find((l) => l.startsWith('policy '))).toMatch(/useful util%.*lost GPU-h/);
    for (const p of ['full', 'fifo']) expect(r.stdout).toContain(`per team, policy ${p}:`);
    const html = readFileSync(join(dir, 'decision.html'), 'utf8');
    expect(html).toContain('<h2>Assumptions</h2>');
    expect(html).toContain('useful util %');
    expect(html).toContain('lost accelerator-h');
    // The team table of each policy.
    expect(html.match(/<th>usage ÷ quota share<\/th>/g)).toHaveLength(2);
    // Series differ by dash as well as colour (the second series of a chart is dashed).
    expect(html).toContain('stroke-dasharray="7 3"');
    // The tail on a log axis; JCT and wait on charts of their own.
    expect(html).toContain('Queueing delay tail: jobs that waited longer than x');
    expect(html).toContain('Mean JCT by gang size');
    expect(html).toContain('Mean queueing delay by gang size');
  });
});
