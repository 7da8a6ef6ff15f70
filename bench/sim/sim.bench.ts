/**
 * Trace-simulator benchmark: prints one JSON line per scenario (no assertions; figures to read).
 *
 * - `philly`: the full Philly replay (82,247 jobs, 15 VCs as teams) on the Helios fleet of the VCs
 *   (352 nodes × 8 GPUs), quotas ∝ VC nodes, one cohort; every policy; wall time per policy.
 * - `philly-contended`: the same trace on 100 nodes × 8 GPUs (≈ 47 % mean load), where policies differ.
 * - `gavel`: Gavel's 36 V100 + 36 P100 + 36 K80 with the msr_seed0 traces (the first
 *   BENCH_SIM_GAVEL_JOBS jobs by arrival, default 1000), `full` vs `hetero-agnostic`:
 *   jctRatio = hetero-agnostic mean JCT ÷ ours (Gavel publishes ≈ 3.3× for its own policy);
 *   jctRatioSpeedFloor: the same with jobs that accept only flavors where they run at ≥ ½ their best speed.
 *
 * Environment: QM_TRACES_DIR (default ../shared/traces from the repo root), BENCH_SIM_SCENARIOS
 * (comma list), BENCH_SIM_POLICIES (comma list, default all), BENCH_SIM_GAVEL_JOBS, BENCH_SIM_SWEEP_JOBS,
 * BENCH_SIM_SWEEP_LOADS, BENCH_SIM_CHECKPOINT_SECONDS, BENCH_SIM_GRACE_SECONDS (grace period of checkpointing jobs, default 0).
 */
import { DEFAULT_OPTIONS, runCycle, seededRandom } from '#core';
import {
  type PolicyName,
  type PolicyRun,
  type SimInput,
  applySpeedFloor,
  POLICY_NAMES,
  buildCluster,
  deriveTenancy,
  gavelCluster,
  isPolicyName,
  loadGavel,
  loadPhilly,
  optimalCapacity,
  parseVcNodes,
  phillyCluster,
  PHILLY_FLAVOR,
  readText,
  simulatePolicy,
  tracesDir,
} from '#sim';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot } from '../../apps/cli/src/repo-root.js';

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

const round = (v: number, d = 2): number => Math.round(v * 10 ** d) / 10 ** d;

function figures(run: PolicyRun): Record<string, number> {
  const o = run.metrics.overall;
  return {
    wallSeconds: round(run.wallSeconds, 1),
    cpuSeconds: round(run.cpuSeconds, 1),
    coreSeconds: round(o.coreSeconds, 1),
    cycles: o.cycles,
    maxPending: run.result.maxPending,
    slowestCycleMs: round(run.result.slowestCycleMillis, 1),
    completed: o.completed,
    utilization: round(o.utilization, 4),
    usefulUtilization: round(o.usefulUtilization, 4),
    utilizationWhileQueued: round(o.utilizationWhileQueued, 4),
    meanWaitHours: round(o.queueingDelaySeconds.mean / 3600, 3),
    medianWaitSeconds: round(o.queueingDelaySeconds.median, 0),
    p99WaitHours: round(o.queueingDelaySeconds.p99 / 3600, 2),
    meanJctHours: round(o.jctSeconds.mean / 3600, 2),
    preemptions: o.preemptions,
    moves: o.moves,
    lostGpuHours: round(o.lostAcceleratorHours, 0),
    largeGangJobs: o.largeGang.jobs,
    largeGangLongestWaitHours: round(o.largeGang.longestWaitSeconds / 3600, 2),
    largeGangMeanWaitHours: round(o.largeGang.meanWaitSeconds / 3600, 2),
    jain: round(o.jainFairness, 4),
    makespanDays: round(o.makespanSeconds / 86_400, 1),
  };
}

function input(base: Omit<SimInput, 'config'>, checkpointIntervalSeconds = 0): SimInput {
  return {
    ...base,
    config: { cycleIntervalSeconds: 10, checkpointIntervalSeconds, checkpointGraceSeconds: GRACE_SECONDS, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS } },
  };
}

/** Grace period of checkpointing jobs (preempted or moved: they run on this long and checkpoint at its end); 0 = none. */
const GRACE_SECONDS = Number(process.env.BENCH_SIM_GRACE_SECONDS ?? 0);

/** Checkpoint interval of the `full+checkpoint` runs (every job checkpoints this often; victims are chosen by work lost). */
const CHECKPOINT_SECONDS = Number(process.env.BENCH_SIM_CHECKPOINT_SECONDS ?? 1800);

function philly(scenario: string, nodes: number | null): void {
  const vcNodes = parseVcNodes(readText(join(dir, 'helios', 'philly_vc_nodes.csv'), 'VC nodes'), 'philly_vc_nodes.csv');
  const cluster = nodes === null ? phillyCluster(vcNodes) : buildCluster([PHILLY_FLAVOR], [{ flavor: PHILLY_FLAVOR.name, count: nodes, acceleratorsPerNode: 8 }]);
  const started = performance.now();
  const trace = loadPhilly(join(dir, 'philly', 'philly.csv'), cluster.flavors);
  const tenancy = deriveTenancy(
    trace.jobs.map((j) => j.team),
    vcNodes,
    cluster,
  );
  const loadSeconds = (performance.now() - started) / 1000;
  const out: Record<string, unknown> = {
    scenario,
    jobs: trace.jobs.length,
    rejected: trace.rejected.length,
    teams: tenancy.teams.length,
    accelerators: cluster.nodes.reduce((s, n) => s + n.accelerators, 0),
    loadSeconds: round(loadSeconds, 1),
  };
  let wall = 0;
  let cpu = 0;
  const per: Record<string, Record<string, number>> = {};
  for (const p of policies) {
    const run = simulatePolicy(input({ trace, cluster, tenancy, epochMs: trace.epochMs }), p, runCycle);
    wall += run.wallSeconds;
    cpu += run.cpuSeconds;
    per[p] = figures(run);
    process.stderr.write(`${scenario} ${p}: wall ${run.wallSeconds.toFixed(1)} s, cpu ${run.cpuSeconds.toFixed(1)} s\n`);
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

/**
 * Gavel load sweep: the first BENCH_SIM_SWEEP_JOBS msr_seed0 jobs (by arrival) on 36 V100 + 36 P100 +
 * 36 K80, re-timed as a Poisson stream (seeded) whose rate is `load` × what the best placement can serve
 * (optimal-capacity.ts: the LP over the throughput table; load 1.0 = jobs arrive exactly as fast as an
 * ideal, time-shared, heterogeneity-aware fleet completes them). One line per load: mean JCT of `full`
 * (relative-speed placement), `fastest-free` (the previous placement) and `hetero-agnostic` (random
 * flavor), the ratios agnostic ÷ aware, moves and lost accelerator-hours. Jobs checkpoint every
 * BENCH_SIM_CHECKPOINT_SECONDS (default 1800), so `full` moves running jobs to faster flavors as they free up.
 * `full` and `hetero-agnostic` run again with `ordering: 'shortest-first'` (the same order for both): the
 * ratios agnostic FIFO ÷ ours shortest-first and agnostic ÷ ours both shortest-first are reported apart.
 */
function gavelSweep(): void {
  const cluster = gavelCluster();
  const all = loadGavel([join(dir, 'gavel', 'msr_seed0')], join(dir, 'gavel', 'simulation_throughputs.json'));
  // One queue, as in Gavel's simulations: placement alone differs between the policies (no quota reclaim).
  const jobs = [...all.jobs]
    .sort((a, b) => a.submitSeconds - b.submitSeconds || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, sweepJobs)
    .map((j) => ({ ...j, team: 'gavel' }));
  const tenancy = deriveTenancy(['gavel'], { gavel: 1 }, cluster);
  const cap = optimalCapacity(jobs, cluster);
  for (const load of sweepLoads) {
    const rnd = seededRandom(7);
    const meanGap = 86_400 / (load * cap.jobsPerDayAtFullLoad);
    let t = 0;
    const timed = jobs.map((j) => {
      const at = t;
      t += -Math.log(1 - rnd()) * meanGap;
      return { ...j, submitSeconds: Math.round(at) };
    });
    // Every job checkpoints every CHECKPOINT_SECONDS (an assumption, as in Gavel's rounds): `full` may then
    // move a running job to a faster flavor that frees up (moves.ts); no other policy moves.
    const base = input({ trace: { jobs: timed, rejected: [] }, cluster, tenancy, epochMs: 0 }, CHECKPOINT_SECONDS);
    const per: Record<string, Record<string, number>> = {};
    let wall = 0;
    for (const p of ['full', 'fastest-free', 'hetero-agnostic'] as const) {
      if (!policies.includes(p)) continue;
      const run = simulatePolicy(base, p, runCycle);
      wall += run.wallSeconds;
      per[p] = figures(run);
      process.stderr.write(`gavel-sweep ${load} ${p}: wall ${run.wallSeconds.toFixed(1)} s, mean JCT ${per[p].meanJctHours} h\n`);
    }
    // The same two policies with `ordering: 'shortest-first'` (ordering.ts): the aware policy's ratio is
    // reported against the agnostic one with FIFO order (the baseline above) and with the same order.
    const shortestFirst: SimInput = { ...base, config: { ...base.config, options: { ...base.config.options, ordering: 'shortest-first' } } };
    for (const p of ['full', 'hetero-agnostic'] as const) {
      if (!policies.includes(p)) continue;
      const run = simulatePolicy(shortestFirst, p, runCycle);
      wall += run.wallSeconds;
      per[`${p}+shortest-first`] = figures(run);
      process.stderr.write(`gavel-sweep ${load} ${p}+shortest-first: wall ${run.wallSeconds.toFixed(1)} s, mean JCT ${per[`${p}+shortest-first`]!.meanJctHours} h\n`);
    }
    const jct = (p: string): number | undefined => per[p]?.meanJctHours;
    const ratio = (x: number | undefined, y: number | undefined): number | null => (x !== undefined && y !== undefined && y > 0 ? round(x / y, 3) : null);
    process.stdout.write(
      JSON.stringify({
        scenario: 'gavel-sweep',
        load,
        jobs: jobs.length,
        jobsPerDay: round(load * cap.jobsPerDayAtFullLoad, 1),
        lpJobsPerDay: round(cap.jobsPerDayAtFullLoad, 1),
        typeBlindCapacityRatio: round(cap.jobsPerDayAtFullLoad / cap.typeBlindJobsPerDay, 3),
        awareMeanJctHours: jct('full'),
        fastestFreeMeanJctHours: jct('fastest-free'),
        agnosticMeanJctHours: jct('hetero-agnostic'),
        jctRatio: ratio(jct('hetero-agnostic'), jct('full')),
        jctRatioFastestFree: ratio(jct('hetero-agnostic'), jct('fastest-free')),
        awareShortestFirstMeanJctHours: jct('full+shortest-first'),
        agnosticShortestFirstMeanJctHours: jct('hetero-agnostic+shortest-first'),
        // agnostic (FIFO, the baseline) ÷ aware with shortest-first order: what the aware scheduler gains with both features.
        jctRatioShortestFirstVsFifoAgnostic: ratio(jct('hetero-agnostic'), jct('full+shortest-first')),
        // agnostic ÷ aware, both with shortest-first order: what heterogeneity awareness alone gains under that order.
        jctRatioShortestFirstBoth: ratio(jct('hetero-agnostic+shortest-first'), jct('full+shortest-first')),
        moves: per.full?.moves ?? 0,
        movesShortestFirst: per['full+shortest-first']?.moves ?? 0,
        checkpointSeconds: CHECKPOINT_SECONDS,
        graceSeconds: GRACE_SECONDS,
        lostGpuHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.lostGpuHours])),
        makespanDays: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.makespanDays])),
        utilizationWhileQueued: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.utilizationWhileQueued])),
        meanWaitHours: Object.fromEntries(Object.entries(per).map(([p, f]) => [p, f.meanWaitHours])),
        wallSeconds: round(wall, 1),
        loadAverage1m: round(loadavg()[0]!, 1),
      }) + '\n',
    );
  }
}

if (wanted.includes('philly')) philly('philly', null);
if (wanted.includes('philly-contended')) philly('philly-contended', 100);
if (wanted.includes('gavel')) gavel();
if (wanted.includes('gavel-sweep')) gavelSweep();
