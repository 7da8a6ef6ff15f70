import { writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DEFAULT_OPTIONS, resolveMoveOptions, slowerFlavorDelayWeight } from '#core';
import {
  POLICY_NAMES,
  applySpeedFloor,
  changeNodes,
  changeQuota,
  deriveTenancy,
  gavelCluster,
  isPolicyName,
  loadGavel,
  loadPhilly,
  parseClusterFile,
  parseTenancyFile,
  parseVcNodes,
  phillyCluster,
  readText,
  renderHtmlReport,
  simulatePolicy,
  whatIfDiff,
  type ClusterSpec,
  type PolicyName,
  type PolicyRun,
  type Rejected,
  type Scheduler,
  type SimInput,
  type TenancySpec,
  type Trace,
  type WhatIfDiff,
} from '#sim';
import { ProgressBar, type ProgressStream } from './progress.js';
import { simulationTracesDir } from './sample-traces.js';
import { formatTable, hours, signed } from './table.js';
import { UsageError } from './errors.js';

export { UsageError };

export interface SimulateFlags {
  trace: string;
  traceFile?: string[];
  throughputs?: string;
  cluster?: string;
  tenancy?: string;
  policy?: string;
  policies?: string;
  cycleInterval: number;
  checkpointInterval: number;
  /** Grace period of checkpointing jobs (0 = none). */
  checkpointGrace?: number;
  reservationDepth?: number;
  /** Queue order of every policy (SchedulerOptions.ordering); absent = fifo. */
  ordering?: 'fifo' | 'shortest-first';
  /** SchedulerOptions.slowerFlavorDelayWeight of every policy; absent = the core's default (3). */
  slowerFlavorDelay?: number;
  minRuntime?: number;
  limit?: number;
  speedFloor?: number;
  seed: number;
  quota: string[];
  nodes: string[];
  fromDb?: boolean;
  since?: string;
  json?: boolean;
  out?: string;
  report?: string;
  progress: boolean;
}

export interface CliIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  repoRoot: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  scheduler: Scheduler;
  /** Wall clock (epoch ms), for --from-db windows. */
  now: () => number;
}

interface Change {
  kind: 'quota' | 'nodes';
  label: string;
  apply: (cluster: ClusterSpec, tenancy: TenancySpec) => { cluster: ClusterSpec; tenancy: TenancySpec };
}

/** `vision/h100-80gb=48` → a quota change. */
export function parseQuotaChange(text: string): Change {
  const m = /^([^/=\s]+)\/([^/=\s]+)=(\d+)$/.exec(text);
  if (m === null) throw new UsageError(`--quota '${text}': expected TEAM/FLAVOR=NOMINAL, e.g. vision/h100-80gb=48`);
  const [, team, flavor, n] = m as unknown as [string, string, string, string];
  return { kind: 'quota', label: `quota ${team}/${flavor}=${n}`, apply: (cluster, tenancy) => ({ cluster, tenancy: changeQuota(tenancy, team, flavor, Number(n), cluster) }) };
}

/** `h100-80gb=+16` (add 16 nodes) or `h100-80gb=-4` (remove 4). */
export function parseNodesChange(text: string): Change {
  const m = /^([^=\s]+)=([+-]\d+)$/.exec(text);
  if (m === null) throw new UsageError(`--nodes '${text}': expected FLAVOR=+N or FLAVOR=-N, e.g. h100-80gb=+16`);
  const [, flavor, delta] = m as unknown as [string, string, string];
  return { kind: 'nodes', label: `nodes ${flavor}${delta}`, apply: (cluster, tenancy) => ({ cluster: changeNodes(cluster, flavor, Number(delta)), tenancy }) };
}

/** Flavors whose accelerators exceed the teams' nominal quotas: the core lends only nominal quota, so the rest stays idle. */
export function unownedCapacity(cluster: ClusterSpec, tenancy: TenancySpec): string[] {
  const capacity = new Map<string, number>();
  for (const n of cluster.nodes) capacity.set(n.flavor, (capacity.get(n.flavor) ?? 0) + n.accelerators);
  const nominal = new Map<string, number>();
  for (const q of tenancy.quotas) nominal.set(q.flavor, (nominal.get(q.flavor) ?? 0) + q.nominal);
  const notes: string[] = [];
  for (const [flavor, cap] of capacity) {
    const owned = nominal.get(flavor) ?? 0;
    if (cap > owned) notes.push(`${flavor} has ${cap} accelerators but the teams' nominal quotas sum to ${owned}; the ${cap - owned} beyond them are usable only if quotas grow (--quota)`);
  }
  return notes;
}

function selectPolicies(flags: SimulateFlags): PolicyName[] {
  if (flags.policies !== undefined && flags.policy !== undefined) throw new UsageError('use either --policy or --policies, not both');
  const list = flags.policies === undefined ? [flags.policy ?? 'full'] : flags.policies === 'all' ? [...POLICY_NAMES] : flags.policies.split(',').map((p) => p.trim());
  const out: PolicyName[] = [];
  for (const p of list) {
    if (!isPolicyName(p)) throw new UsageError(`unknown policy '${p}' (known: ${POLICY_NAMES.join(', ')}, or 'all')`);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

interface Loaded {
  trace: Trace;
  cluster: ClusterSpec;
  tenancy: TenancySpec;
  /** Set when the tenancy was derived from the fleet (no file, no database): re-derived for a changed fleet. */
  derive?: (cluster: ClusterSpec) => TenancySpec;
  epochMs: number;
  description: string;
  /** What the figures rest on, for the summary and the report. */
  assumptions: string[];
  /** Assumptions that change the figures a lot (said loudly: stderr, summary, report). */
  warnings: string[];
}

const listed = (names: string[], max = 5): string => names.slice(0, max).join(', ') + (names.length > max ? `, … (${names.length - max} more)` : '');
const percent = (part: number, whole: number): string => `${whole > 0 ? ((100 * part) / whole).toFixed(0) : '0'} %`;

/** Trace teams missing from a tenancy file: their jobs are rejected, which the figures must not hide. */
function unknownTeamsWarning(trace: Trace, tenancy: TenancySpec, file: string): string[] {
  const known = new Set(tenancy.teams.map((t) => t.name));
  const teams = [...new Set(trace.jobs.map((j) => j.team))].sort();
  const unknown = teams.filter((t) => !known.has(t));
  if (unknown.length === 0) return [];
  const jobs = trace.jobs.filter((j) => !known.has(j.team)).length;
  return [
    `${unknown.length} of ${teams.length} trace teams are not in the tenancy file ${file} (${listed(unknown)}): their ${jobs} jobs (${percent(jobs, trace.jobs.length)} of the trace) are rejected and every figure leaves them out — add them to the file to count them`,
  ];
}

/** How a derived tenancy split each flavor, and which trace teams got no share. */
function derivedQuotaNotes(trace: Trace, weights: Record<string, number>, weightsFile: string): { assumptions: string[]; warnings: string[] } {
  const teams = [...new Set(trace.jobs.map((j) => j.team))].sort();
  const weighted = teams.filter((t) => (weights[t] ?? 0) > 0);
  const assumptions = [`quotas derived (no --tenancy): one cohort with unlimited borrowing and lending; each flavor's accelerators split into nominal quotas in proportion to the teams' node counts in ${weightsFile}`];
  if (weighted.length === 0) {
    return { assumptions, warnings: [`none of the ${teams.length} trace teams (${listed(teams)}) is in ${weightsFile}: each flavor is split equally among them — pass --tenancy for real quotas`] };
  }
  const unweighted = teams.filter((t) => (weights[t] ?? 0) <= 0);
  if (unweighted.length === 0) return { assumptions, warnings: [] };
  return {
    assumptions,
    warnings: [`${unweighted.length} of ${teams.length} trace teams are not in ${weightsFile} (${listed(unweighted)}): nominal quota 0, they run only on capacity other teams lend — pass --tenancy for real quotas`],
  };
}

function load(flags: SimulateFlags, io: CliIo): Loaded {
  const dir = simulationTracesDir(io, flags);
  const at = (p: string): string => resolve(io.cwd, p);
  const vcNodes = (): Record<string, number> => {
    const path = join(dir, 'helios', 'philly_vc_nodes.csv');
    return parseVcNodes(readText(path, 'Philly VC node counts'), basename(path));
  };
  let cluster: ClusterSpec;
  let trace: Trace;
  let epochMs = Date.UTC(2017, 0, 1);
  let description: string;
  if (flags.trace === 'philly') {
    cluster = flags.cluster !== undefined ? parseClusterFile(readText(at(flags.cluster), 'cluster file'), basename(flags.cluster)) : phillyCluster(vcNodes());
    if ((flags.traceFile?.length ?? 0) > 1) throw new UsageError('--trace philly takes one --trace-file');
    const file = flags.traceFile?.[0] !== undefined ? at(flags.traceFile[0]) : join(dir, 'philly', 'philly.csv');
    const philly = loadPhilly(file, cluster.flavors);
    trace = philly;
    epochMs = philly.epochMs;
    description = `Philly ${basename(file)}`;
  } else if (flags.trace === 'gavel') {
    cluster = flags.cluster !== undefined ? parseClusterFile(readText(at(flags.cluster), 'cluster file'), basename(flags.cluster)) : gavelCluster();
    const files = flags.traceFile?.map(at) ?? [join(dir, 'gavel', 'msr_seed0')];
    const throughputs = flags.throughputs !== undefined ? at(flags.throughputs) : join(dir, 'gavel', 'simulation_throughputs.json');
    trace = loadGavel(files, throughputs);
    description = `Gavel ${files.map((f) => basename(f)).join(', ')}`;
  } else {
    throw new UsageError(`unknown trace kind '${flags.trace}' (philly or gavel)`);
  }
  if (flags.limit !== undefined) {
    const sorted = [...trace.jobs].sort((a, b) => a.submitSeconds - b.submitSeconds || (a.id < b.id ? -1 : 1));
    trace = { jobs: sorted.slice(0, flags.limit), rejected: trace.rejected };
  }
  if (flags.speedFloor !== undefined) {
    if (flags.speedFloor > 1) throw new UsageError(`--speed-floor ${flags.speedFloor}: must be between 0 and 1`);
    trace = { jobs: applySpeedFloor(trace.jobs, flags.speedFloor), rejected: trace.rejected };
  }
  const teams = trace.jobs.map((j) => j.team);
  if (flags.tenancy !== undefined) {
    const tenancy = parseTenancyFile(readText(at(flags.tenancy), 'tenancy file'), basename(flags.tenancy), cluster);
    return { trace, cluster, tenancy, epochMs, description, assumptions: [`quotas from the tenancy file ${basename(flags.tenancy)}`], warnings: unknownTeamsWarning(trace, tenancy, basename(flags.tenancy)) };
  }
  const weights = vcNodes();
  const derive = (c: ClusterSpec): TenancySpec => deriveTenancy(teams, weights, c);
  return { trace, cluster, tenancy: derive(cluster), derive, epochMs, description, ...derivedQuotaNotes(trace, weights, 'helios/philly_vc_nodes.csv') };
}

export interface SimulateOutput {
  input: {
    trace: string;
    jobs: number;
    accelerators: number;
    flavors: Record<string, number>;
    teams: number;
    cycleIntervalSeconds: number;
    checkpointIntervalSeconds: number;
    checkpointGraceSeconds: number;
    /** What the figures rest on (quotas, checkpoints, cycles, starting state). */
    assumptions: string[];
    /** Assumptions that change the figures a lot (e.g. trace teams missing from the tenancy file). */
    warnings: string[];
  };
  rejected: Rejected[];
  runs: { policy: PolicyName; wallSeconds: number; cpuSeconds: number; metrics: Omit<PolicyRun['metrics'], 'rejected'> }[];
  whatIf?: { policy: PolicyName; diff: WhatIfDiff }[];
}

/** `7d`, `12h`, `30m`, `90s` → milliseconds. */
export function parseSince(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text);
  if (m === null) throw new UsageError(`--since '${text}': expected a duration such as 7d, 12h, 30m`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit * 1000;
}

async function loadFromDb(flags: SimulateFlags, io: CliIo): Promise<Loaded> {
  if (flags.traceFile !== undefined || flags.cluster !== undefined || flags.tenancy !== undefined || flags.throughputs !== undefined) {
    throw new UsageError('--from-db replays the jobs, fleet and quotas stored in Postgres: do not combine it with --trace-file, --cluster, --tenancy or --throughputs');
  }
  const windowMs = parseSince(flags.since ?? '7d');
  const now = io.now();
  const since = now - windowMs;
  const { Database, databaseUrlFromEnv, redactDatabaseUrl } = await import('#db');
  const { loadFromDatabase } = await import('./history-from-db.js');
  const url = databaseUrlFromEnv(io.env);
  const db = new Database(url, { poolSize: 2, applicationName: 'qm-simulate' });
  try {
    const { cluster, tenancy, trace } = await loadFromDatabase(db, since, now).catch((e: unknown) => {
      throw new Error(`cannot read the job history from ${redactDatabaseUrl(url)}: ${(e as Error).message}`, { cause: e });
    });
    if (cluster.nodes.length === 0) throw new Error('the database has no nodes: nothing to simulate on');
    const running = trace.jobs.filter((j) => j.runningAtStart !== undefined).length;
    const waiting = trace.jobs.filter((j) => j.runningAtStart === undefined && j.submitSeconds < 0).length;
    const at = new Date(since).toISOString();
    return {
      trace,
      cluster,
      tenancy,
      epochMs: since,
      description: `jobs of the last ${flags.since ?? '7d'} from Postgres`,
      assumptions: [
        `replayed from the cluster's state at ${at}: ${running} job${running === 1 ? '' : 's'} running (placed first fit on ${running === 1 ? 'its' : 'their'} flavor), ${waiting} waiting`,
        `fleet and quotas as stored now, not as they were at ${at}`,
      ],
      warnings: unknownTeamsWarning(trace, tenancy, 'in the database'),
    };
  } finally {
    await db.close();
  }
}

export async function simulateCommand(flags: SimulateFlags, io: CliIo): Promise<number> {
  if (flags.fromDb !== true && flags.since !== undefined) throw new UsageError('--since only applies with --from-db');
  const policies = selectPolicies(flags);
  const changes = [...flags.quota.map(parseQuotaChange), ...flags.nodes.map(parseNodesChange)];
  const loaded = flags.fromDb === true ? await loadFromDb(flags, io) : load(flags, io);
  const options = { ...DEFAULT_OPTIONS };
  if (flags.reservationDepth !== undefined) options.reservationDepth = flags.reservationDepth;
  if (flags.ordering !== undefined) options.ordering = flags.ordering;
  if (flags.slowerFlavorDelay !== undefined) options.slowerFlavorDelayWeight = flags.slowerFlavorDelay;
  if (flags.minRuntime !== undefined) options.minRuntimeBeforePreemptionSeconds = flags.minRuntime;
  const input: SimInput = {
    trace: loaded.trace,
    cluster: loaded.cluster,
    tenancy: loaded.tenancy,
    config: { cycleIntervalSeconds: flags.cycleInterval, checkpointIntervalSeconds: flags.checkpointInterval, checkpointGraceSeconds: flags.checkpointGrace ?? 0, seriesBucketSeconds: 0, options },
    epochMs: loaded.epochMs,
  };
  let changed: SimInput | undefined;
  if (changes.length > 0) {
    // Fleet changes first; a derived tenancy is re-derived for the new fleet; then quota changes.
    let { cluster, tenancy } = input;
    for (const c of changes) if (c.kind === 'nodes') ({ cluster, tenancy } = c.apply(cluster, tenancy));
    if (loaded.derive !== undefined) tenancy = loaded.derive(cluster);
    for (const c of changes) if (c.kind === 'quota') ({ cluster, tenancy } = c.apply(cluster, tenancy));
    changed = { ...input, cluster, tenancy };
    for (const note of unownedCapacity(cluster, tenancy)) io.stderr.write(`note (what-if): ${note}\n`);
  }

  for (const w of loaded.warnings) io.stderr.write(`WARNING: ${w}\n`);
  for (const r of loaded.trace.rejected.slice(0, 5)) io.stderr.write(`warning: ${r.source}:${r.line}: ${r.reason} (job rejected)\n`);
  const runs: PolicyRun[] = [];
  const whatIf: { policy: PolicyName; diff: WhatIfDiff }[] = [];
  let rejected: Rejected[] = [];
  for (const policy of policies) {
    const run = (label: string, inp: SimInput): PolicyRun => {
      const bar = new ProgressBar(io.stderr, label);
      const useBar = flags.progress && bar.enabled;
      const result = simulatePolicy(inp, policy, io.scheduler, useBar ? { onProgress: (d, t) => bar.update(d, t) } : {}, flags.seed);
      bar.finish();
      return result;
    };
    const base = run(policy, input);
    runs.push(base);
    rejected = base.metrics.rejected;
    if (changed !== undefined) {
      const after = run(`${policy} (what-if)`, changed);
      whatIf.push({ policy, diff: whatIfDiff(changes.map((c) => c.label), base.metrics, after.metrics) });
    }
  }
  const extra = rejected.length - loaded.trace.rejected.length;
  if (loaded.trace.rejected.length > 5) io.stderr.write(`warning: ${loaded.trace.rejected.length} rows rejected in all (see "rejected" in the JSON output)\n`);
  if (extra > 0) {
    for (const r of rejected.slice(loaded.trace.rejected.length, loaded.trace.rejected.length + 5)) io.stderr.write(`warning: ${r.source}:${r.line}: ${r.reason} (job rejected)\n`);
    if (extra > 5) io.stderr.write(`warning: ${extra} jobs rejected against the cluster in all (see "rejected" in the JSON output)\n`);
  }

  const flavors: Record<string, number> = {};
  for (const n of input.cluster.nodes) flavors[n.flavor] = (flavors[n.flavor] ?? 0) + n.accelerators;
  const output: SimulateOutput = {
    input: {
      trace: loaded.description,
      jobs: loaded.trace.jobs.length,
      accelerators: Object.values(flavors).reduce((a, b) => a + b, 0),
      flavors,
      teams: input.tenancy.teams.length,
      cycleIntervalSeconds: flags.cycleInterval,
      checkpointIntervalSeconds: flags.checkpointInterval,
      checkpointGraceSeconds: flags.checkpointInterval > 0 ? (flags.checkpointGrace ?? 0) : 0,
      assumptions: [
        ...loaded.assumptions,
        flags.checkpointInterval > 0
          ? `every job checkpoints every ${flags.checkpointInterval} s: a preempted job keeps its progress up to its last checkpoint` +
            ((flags.checkpointGrace ?? 0) > 0
              ? `; a preempted or moved job runs on for its ${flags.checkpointGrace} s grace period and checkpoints at its end, and the job taking its accelerators starts then`
              : ' (no grace period: --checkpoint-grace to simulate one)')
          : 'no checkpoints: a preempted job restarts from zero (--checkpoint-interval to change)',
        `a scheduling cycle every ${flags.cycleInterval} s of virtual time, only when something changed; run times are exact (the trace's), so the core knows every job's end`,
        flags.ordering === 'shortest-first'
          ? 'queue order shortest-first for every policy: least expected accelerator-seconds first, aged by the time waited (run times are exact here, so the order uses oracle knowledge a real queue only estimates)'
          : 'queue order fifo (by submission) for every policy (--ordering shortest-first to change)',
        `a job that ran before (moved, or preempted and admitted again) makes progress only ${resolveMoveOptions(options.moves).restartSeconds} s after it starts again (restart: pod start, checkpoint load); a first start costs nothing extra`,
        `a 'fastest' job starts on a slower flavor now only when it finishes sooner by more than ${slowerFlavorDelayWeight(options)} × the delay its slower run causes the other waiting jobs (--slower-flavor-delay to change; 0 = its own finish alone)`,
      ],
      warnings: loaded.warnings,
    },
    rejected,
    runs: runs.map((r) => {
      const { rejected: _r, ...metrics } = r.metrics;
      return { policy: r.policy, wallSeconds: r.wallSeconds, cpuSeconds: r.cpuSeconds, metrics };
    }),
    ...(whatIf.length > 0 ? { whatIf } : {}),
  };
  const json = JSON.stringify(output, null, 2) + '\n';
  if (flags.out !== undefined) writeOut(resolve(io.cwd, flags.out), json, 'metrics JSON');
  if (flags.report !== undefined) {
    const html = renderHtmlReport(
      `Quartermaster simulation — ${loaded.description}`,
      runs.map((r) => ({ policy: r.policy, result: r.result, metrics: r.metrics })),
      [`${output.input.jobs} jobs, ${output.input.accelerators} accelerators (${Object.entries(flavors).map(([f, n]) => `${n} ${f}`).join(', ')}), ${output.input.teams} teams.`],
      { assumptions: output.input.assumptions, warnings: output.input.warnings },
    );
    writeOut(resolve(io.cwd, flags.report), html, 'HTML report');
  }
  if (flags.json === true) io.stdout.write(json);
  else io.stdout.write(summary(output));
  return 0;
}

function writeOut(path: string, text: string, what: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new Error(`cannot write ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
}

export function comparisonTable(runs: SimulateOutput['runs']): string {
  return formatTable(
    ['policy', 'done', 'util%', 'useful util%', 'util% queued', 'wait mean h', 'wait p50 s', 'wait p99 h', 'JCT mean h', 'JCT p50 h', 'preempt', 'moves', 'lost GPU-h', '>=32 max wait h', '>=32 mean wait h', 'Jain', 'wall s', 'cpu s'],
    runs.map(({ policy, metrics: { overall: o }, wallSeconds, cpuSeconds }) => [
      policy,
      `${o.completed}/${o.jobs}`,
      (100 * o.utilization).toFixed(1),
      (100 * o.usefulUtilization).toFixed(1),
      (100 * o.utilizationWhileQueued).toFixed(1),
      hours(o.queueingDelaySeconds.mean),
      o.queueingDelaySeconds.median.toFixed(0),
      hours(o.queueingDelaySeconds.p99),
      hours(o.jctSeconds.mean),
      hours(o.jctSeconds.median),
      String(o.preemptions),
      String(o.moves),
      o.lostAcceleratorHours.toFixed(0),
      hours(o.largeGang.longestWaitSeconds),
      hours(o.largeGang.meanWaitSeconds),
      o.jainFairness.toFixed(3),
      wallSeconds.toFixed(1),
      cpuSeconds.toFixed(1),
    ]),
  );
}

function summary(out: SimulateOutput): string {
  const parts: string[] = [];
  parts.push(`${out.input.trace}: ${out.input.jobs} jobs (${out.rejected.length} rejected), ${out.input.accelerators} accelerators, ${out.input.teams} teams\n`);
  for (const w of out.input.warnings) parts.push(`\nWARNING: ${w}\n`);
  parts.push('\nassumptions:\n');
  for (const a of out.input.assumptions) parts.push(`  - ${a}\n`);
  parts.push('\n');
  parts.push(comparisonTable(out.runs));
  for (const run of out.runs) {
    const teams = run.metrics.teams;
    parts.push(`\nper team, policy ${run.policy}:\n`);
    parts.push(
      formatTable(
        ['team', 'jobs', 'done', 'wait mean h', 'wait p50 s', 'wait p99 h', 'JCT mean h', 'GPU-h', 'lost GPU-h', 'usage/quota', 'preempt'],
        Object.entries(teams).map(([team, t]) => [
          team,
          String(t.jobs),
          String(t.completed),
          hours(t.queueingDelaySeconds.mean),
          t.queueingDelaySeconds.median.toFixed(0),
          hours(t.queueingDelaySeconds.p99),
          hours(t.jctSeconds.mean),
          t.acceleratorHours.toFixed(0),
          t.lostAcceleratorHours.toFixed(1),
          t.usageOverQuotaShare === null ? '-' : t.usageOverQuotaShare.toFixed(2),
          String(t.preemptions),
        ]),
      ),
    );
  }
  for (const w of out.whatIf ?? []) {
    parts.push(`\nwhat-if (${w.diff.changes.join(', ')}), policy ${w.policy}: changed − unchanged\n`);
    parts.push(
      formatTable(
        ['team', 'wait mean h', 'Δ wait mean h', 'wait p99 h', 'Δ wait p99 h', 'JCT mean h', 'Δ JCT mean h', 'Δ GPU-h', 'Δ done'],
        [w.diff.overall, ...w.diff.teams].map((d) => [
          d.team,
          hours(d.changed.meanWaitSeconds),
          signed(d.delta.meanWaitSeconds / 3600),
          hours(d.changed.p99WaitSeconds),
          signed(d.delta.p99WaitSeconds / 3600),
          hours(d.changed.meanJctSeconds),
          signed(d.delta.meanJctSeconds / 3600),
          signed(d.delta.acceleratorHours, 0),
          signed(d.delta.completed, 0),
        ]),
      ),
    );
  }
  return parts.join('');
}
