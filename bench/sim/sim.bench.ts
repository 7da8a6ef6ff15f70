/**
 * Trace-simulator benchmark: prints one JSON line per scenario (no assertions; figures to read).
 *
 * - `philly`: the full Philly replay (82,247 jobs, 15 VCs as teams) on the Helios fleet of the VCs
 *   (352 nodes × 8 GPUs), quotas ∝ VC nodes, one cohort; every policy; wall time per policy.
 * - `philly-contended`: the same trace on 100 nodes × 8 GPUs (≈ 47 % mean load), where policies differ.
 *   `philly-contended` and `philly-windows` print `preemptionGate` (libs/sim preemption-gate.ts): `full` against
 *   `no-preemption` — GPU-hours discarded of those demanded, mean and p99 wait, the longest wait of gangs ≥ 32
 *   GPUs — and a FAILED RANGE line on stderr when `full` discards more than 2 % or waits longer on average.
 * - `gavel`: Gavel's 36 V100 + 36 P100 + 36 K80 with the msr_seed0 traces (the first
 *   BENCH_SIM_GAVEL_JOBS jobs by arrival, default 1000), `full` vs `hetero-agnostic`:
 *   jctRatio = hetero-agnostic mean JCT ÷ ours (Gavel publishes ≈ 3.3× for its own policy);
 *   jctRatioSpeedFloor: the same with jobs that accept only flavors where they run at ≥ ½ their best speed.
 * - `gavel-sweep`: the load sweep (load-sweep.ts) over the first BENCH_SIM_SWEEP_JOBS msr_seed0 jobs.
 * - `philly-windows` (not run by default): the contended setup (BENCH_SIM_WINDOW_NODES × 8 GPUs, default 100) on
 *   single months of the trace (BENCH_SIM_WINDOWS, default 2017-09,2017-11,2017-12), one line per month.
 * - `gavel-unseen` (not run by default; ~4 simulations per seed, load and shape): the same sweep on
 *   generated Gavel-style workloads and another cluster shape (gavel-unseen.ts; BENCH_SIM_UNSEEN_*).
 *
 * Environment: QM_TRACES_DIR (default ../shared/traces from the repo root), BENCH_SIM_SCENARIOS
 * (comma list), BENCH_SIM_POLICIES (comma list, default all), BENCH_SIM_GAVEL_JOBS, BENCH_SIM_SWEEP_JOBS,
 * BENCH_SIM_SWEEP_LOADS, BENCH_SIM_CHECKPOINT_SECONDS, BENCH_SIM_GRACE_SECONDS (grace period of checkpointing jobs, default 0).
 */
import { runCycle } from '#core';
import {
  type Metrics,
  type PolicyName,
  MAX_DISCARDED_SHARE,
  preemptionGate,
  applySpeedFloor,
  POLICY_NAMES,
  buildCluster,
  deriveTenancy,
  gavelCluster,
  isPolicyName,
  loadGavel,
  loadPhilly,
  parseVcNodes,
  phillyCluster,
  PHILLY_FLAVOR,
  readText,
  simulatePolicy,
  traceWindow,
  tracesDir,
} from '#sim';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot } from '../../apps/cli/src/repo-root.js';
import { gavelUnseen } from './gavel-unseen.js';
import { loadSweep } from './load-sweep.js';
import { CHECKPOINT_SECONDS, GRACE_SECONDS, figures, input, round } from './sim-figures.js';

const dir = tracesDir(findRepoRoot());
const wanted = (process.env.BENCH_SIM_SCENARIOS ?? 'philly,philly-contended,gavel,gavel-sweep').split(',');
const policies: PolicyName[] = (process.env.BENCH_SIM_POLICIES ?? POLICY_NAMES.join(','))
  .split(',')
  .map((p) => p.trim())
  .filter(isPolicyName);
const gavelJobs = Number(process.env.BENCH_SIM_GAVEL_JOBS ?? 1000);
const SPEED_FLOOR = 0.5;
const sweepJobs = Number(process.env.BENCH_SIM_SWEEP_JOBS ?? 500);
const sweepLoads = (process.env.BENCH_SIM_SWEEP_LOADS ?? '0.5,0.8,1.0,1.2,1.5').split(',').map(Number);

/** Philly: the whole trace, or only the jobs submitted in a window (a calendar month, `philly-windows`). */
function philly(scenario: string, nodes: number | null, window?: { label: string; fromMs: number; toMs: number }): void {
  const vcNodes = parseVcNodes(readText(join(dir, 'helios', 'philly_vc_nodes.csv'), 'VC nodes'), 'philly_vc_nodes.csv');
  const cluster = nodes === null ? phillyCluster(vcNodes) : buildCluster([PHILLY_FLAVOR], [{ flavor: PHILLY_FLAVOR.name, count: nodes, acceleratorsPerNode: 8 }]);
  const started = performance.now();
  const whole = loadPhilly(join(dir, 'philly', 'philly.csv'), cluster.flavors);
  const trace = window === undefined ? whole : traceWindow(whole, window.fromMs, window.toMs);
  const tenancy = deriveTenancy(
    trace.jobs.map((j) => j.team),
    vcNodes,
    cluster,
  );
  const loadSeconds = (performance.now() - started) / 1000;
  const out: Record<string, unknown> = {
    scenario,
    ...(window === undefined ? {} : { window: window.label }),
    jobs: trace.jobs.length,
    rejected: trace.rejected.length,
    teams: tenancy.teams.length,
    accelerators: cluster.nodes.reduce((s, n) => s + n.accelerators, 0),
    loadSeconds: round(loadSeconds, 1),
  };
  let wall = 0;
  let cpu = 0;
  const per: Record<string, Record<string, number>> = {};
  const metrics = new Map<string, Metrics>();
  for (const p of policies) {
    const run = simulatePolicy(input({ trace, cluster, tenancy, epochMs: trace.epochMs }), p, runCycle);
    wall += run.wallSeconds;
    cpu += run.cpuSeconds;
    per[p] = figures(run);
    metrics.set(p, run.metrics);
    process.stderr.write(`${scenario} ${p}: wall ${run.wallSeconds.toFixed(1)} s, cpu ${run.cpuSeconds.toFixed(1)} s\n`);
  }
  // The quality gate on preemption (preemption-gate.ts): `full` against `no-preemption`, with a failed range printed.
  const full = metrics.get('full');
  const none = metrics.get('no-preemption');
  if (full !== undefined && none !== undefined) {
    const gate = preemptionGate(full, none);
    out.preemptionGate = { ...gate, maxDiscardedShare: MAX_DISCARDED_SHARE, pass: gate.failed.length === 0 };
    for (const f of gate.failed) process.stderr.write(`${scenario}${window === undefined ? '' : ` ${window.label}`}: FAILED RANGE: ${f}\n`);
  }
  // Checkpoint-aware preemption: `full` again with every job checkpointing every CHECKPOINT_SECONDS.
  if (policies.includes('full')) {
    const run = simulatePolicy(input({ trace, cluster, tenancy, epochMs: trace.epochMs }, CHECKPOINT_SECONDS), 'full', runCycle);
    wall += run.wallSeconds;
    cpu += run.cpuSeconds;
    per['full+checkpoint'] = figures(run);
    process.stderr.write(`${scenario} full+checkpoint: wall ${run.wallSeconds.toFixed(1)} s, cpu ${run.cpuSeconds.toFixed(1)} s\n`);
    const ck = per['full+checkpoint'];
    const np = per['no-preemption'];
    const full = per.full;
    out.checkpointSeconds = CHECKPOINT_SECONDS;
    out.graceSeconds = GRACE_SECONDS;
    out.checkpoint = {
      meanWaitHours: { 'full+checkpoint': ck.meanWaitHours, 'no-preemption': np?.meanWaitHours ?? null, full: full?.meanWaitHours ?? null },
      p99WaitHours: { 'full+checkpoint': ck.p99WaitHours, 'no-preemption': np?.p99WaitHours ?? null, full: full?.p99WaitHours ?? null },
      lostGpuHours: { 'full+checkpoint': ck.lostGpuHours, full: full?.lostGpuHours ?? null },
      lostRatioVsFull: full !== undefined && full.lostGpuHours! > 0 ? round(ck.lostGpuHours! / full.lostGpuHours!, 3) : null,
    };
  }
  out.wallSeconds = round(wall, 1);
  out.cpuSeconds = round(cpu, 1);
  out.maxPolicyWallSeconds = round(Math.max(...Object.values(per).map((f) => f.wallSeconds!)), 1);
  out.maxPolicyCpuSeconds = round(Math.max(...Object.values(per).map((f) => f.cpuSeconds!)), 1);
  out.loadAverage1m = round(loadavg()[0]!, 1);
  out.largeGangLongestWaitHours = Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.largeGangLongestWaitHours]));
  out.policies = per;
  process.stdout.write(JSON.stringify(out) + '\n');
}

function gavel(): void {
  const cluster = gavelCluster();
  const all = loadGavel([join(dir, 'gavel', 'msr_seed0')], join(dir, 'gavel', 'simulation_throughputs.json'));
  const jobs = [...all.jobs].sort((a, b) => a.submitSeconds - b.submitSeconds || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, gavelJobs);
  const vcNodes = parseVcNodes(readText(join(dir, 'helios', 'philly_vc_nodes.csv'), 'VC nodes'), 'philly_vc_nodes.csv');
  const tenancy = deriveTenancy(
    jobs.map((j) => j.team),
    vcNodes,
    cluster,
  );
  const base = input({ trace: { jobs, rejected: all.rejected }, cluster, tenancy, epochMs: 0 });
  const per: Record<string, Record<string, number>> = {};
  let wall = 0;
  const gavelPolicies = policies.filter((p) => p === 'full' || p === 'hetero-agnostic' || p === 'fifo' || p === 'no-reservation');
  for (const p of gavelPolicies) {
    const run = simulatePolicy(base, p, runCycle);
    wall += run.wallSeconds;
    per[p] = figures(run);
    process.stderr.write(`gavel ${p}: wall ${run.wallSeconds.toFixed(1)} s, cpu ${run.cpuSeconds.toFixed(1)} s\n`);
  }
  // Heterogeneity-aware submitters: the same jobs list only flavors where they run at ≥ ½ their best speed.
  if (policies.includes('full')) {
    const floored = { ...base, trace: { jobs: applySpeedFloor(jobs, SPEED_FLOOR), rejected: all.rejected } };
    const run = simulatePolicy(floored, 'full', runCycle);
    wall += run.wallSeconds;
    per['full+speed-floor'] = figures(run);
    process.stderr.write(`gavel full+speed-floor: wall ${run.wallSeconds.toFixed(1)} s, cpu ${run.cpuSeconds.toFixed(1)} s\n`);
  }
  const ours = per.full?.meanJctHours;
  const oursFloor = per['full+speed-floor']?.meanJctHours;
  const agnostic = per['hetero-agnostic']?.meanJctHours;
  process.stdout.write(
    JSON.stringify({
      scenario: 'gavel',
      jobs: jobs.length,
      of: all.jobs.length,
      rejected: all.rejected.length,
      accelerators: { v100: 36, p100: 36, k80: 36 },
      jctRatio: ours !== undefined && agnostic !== undefined && ours > 0 ? round(agnostic / ours, 3) : null,
      jctRatioSpeedFloor: oursFloor !== undefined && agnostic !== undefined && oursFloor > 0 ? round(agnostic / oursFloor, 3) : null,
      speedFloor: SPEED_FLOOR,
      makespanRatioSpeedFloor:
        per['full+speed-floor'] !== undefined && per['hetero-agnostic'] !== undefined ? round(per['hetero-agnostic'].makespanDays! / per['full+speed-floor'].makespanDays!, 3) : null,
      publishedJctRatio: round(96.0 / 29.0, 2),
      wallSeconds: round(wall, 1),
      largeGangLongestWaitHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.largeGangLongestWaitHours])),
      policies: per,
    }) + '\n',
  );
}

/** Gavel load sweep (load-sweep.ts): the first BENCH_SIM_SWEEP_JOBS msr_seed0 jobs (by arrival) on 36 V100 + 36 P100 + 36 K80, arrivals seeded 7. */
function gavelSweep(): void {
  const all = loadGavel([join(dir, 'gavel', 'msr_seed0')], join(dir, 'gavel', 'simulation_throughputs.json'));
  const jobs = [...all.jobs].sort((a, b) => a.submitSeconds - b.submitSeconds || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, sweepJobs);
  loadSweep({ scenario: 'gavel-sweep', jobs, cluster: gavelCluster(), loads: sweepLoads, arrivalSeed: 7, policies, fastestFree: true });
}

if (wanted.includes('philly')) philly('philly', null);
if (wanted.includes('philly-contended')) philly('philly-contended', 100);
if (wanted.includes('philly-windows')) {
  // The contended setup on single months of the trace (its October dominates the whole-trace figures).
  const nodes = Number(process.env.BENCH_SIM_WINDOW_NODES ?? 100);
  for (const month of (process.env.BENCH_SIM_WINDOWS ?? '2017-09,2017-11,2017-12').split(',')) {
    const [y = NaN, m = NaN] = month.split('-').map(Number);
    philly('philly-window', nodes, { label: month, fromMs: Date.UTC(y, m - 1, 1), toMs: Date.UTC(y, m, 1) });
  }
}
if (wanted.includes('gavel')) gavel();
if (wanted.includes('gavel-sweep')) gavelSweep();
if (wanted.includes('gavel-unseen')) gavelUnseen(dir, sweepLoads, policies);
