import type { JobOutcome, Rejected, SimResult, TenancySpec, Unfinished } from './types.js';

/** Gangs of at least this many accelerators are "large" (reported separately: starvation shows there). */
export const LARGE_GANG = 32;

export interface Distribution {
  count: number;
  mean: number;
  /** Nearest-rank percentiles: the value at rank ceil(p × n) of the sorted sample. */
  median: number;
  p99: number;
  max: number;
}

export interface TeamMetrics {
  jobs: number;
  completed: number;
  queueingDelaySeconds: Distribution;
  jctSeconds: Distribution;
  acceleratorHours: number;
  /** Share of all accelerator-time used ÷ share of all nominal quota. */
  usageShare: number;
  quotaShare: number;
  usageOverQuotaShare: number | null;
  preemptions: number;
  /** Accelerator-hours of this team's runs whose progress preemption threw away. */
  lostAcceleratorHours: number;
}

export interface Metrics {
  overall: {
    jobs: number;
    completed: number;
    unfinished: number;
    rejected: number;
    queueingDelaySeconds: Distribution;
    jctSeconds: Distribution;
    /** Accelerator-time held ÷ (capacity × makespan). */
    utilization: number;
    /** The same without work that preemption threw away (accelerator-time that produced nothing kept). */
    usefulUtilization: number;
    utilizationByFlavor: Record<string, number>;
    /** Allocated fraction while at least one job waited (see SimResult.utilizationWhileQueued). */
    utilizationWhileQueued: number;
    preemptions: number;
    /** Running jobs moved to a faster flavor (moves.ts in libs/core). */
    moves: number;
    lostAcceleratorHours: number;
    /** Accelerator-hours the jobs ask for (each on its fastest acceptable flavor): what lost work is a share of. */
    demandAcceleratorHours: number;
    largeGang: { minAccelerators: number; jobs: number; longestWaitSeconds: number; meanWaitSeconds: number };
    /** Jain's index of (usage share ÷ quota share) over teams with a non-zero quota; 1 = perfectly proportional. */
    jainFairness: number;
    makespanSeconds: number;
    cycles: number;
    coreSeconds: number;
  };
  teams: Record<string, TeamMetrics>;
  byGangSize: Record<string, { jobs: number; meanJctSeconds: number; meanQueueingDelaySeconds: number }>;
  rejected: Rejected[];
  unfinished: Unfinished[];
}

export function distribution(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, mean: 0, median: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number): number => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: sorted.length, mean: sum / sorted.length, median: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1]! };
}

export function jainIndex(xs: number[]): number {
  if (xs.length === 0) return 1;
  let s = 0;
  let s2 = 0;
  for (const x of xs) {
    s += x;
    s2 += x * x;
  }
  return s2 === 0 ? 1 : (s * s) / (xs.length * s2);
}

const delay = (j: JobOutcome): number | null => (j.firstStartSeconds === null ? null : j.firstStartSeconds - j.submitSeconds);
const jct = (j: JobOutcome): number | null => (j.endSeconds === null ? null : j.endSeconds - j.submitSeconds);

function collect(jobs: JobOutcome[], f: (j: JobOutcome) => number | null): number[] {
  const out: number[] = [];
  for (const j of jobs) {
    const v = f(j);
    if (v !== null) out.push(v);
  }
  return out;
}

export function computeMetrics(result: SimResult & { rejected: Rejected[] }, tenancy: TenancySpec): Metrics {
  const jobs = result.jobs;
  const makespan = result.endSeconds;
  let heldTotal = 0;
  let demand = 0;
  const heldByFlavor: Record<string, number> = {};
  let lost = 0;
  let preemptions = 0;
  let moves = 0;
  for (const j of jobs) {
    heldTotal += j.acceleratorSeconds;
    lost += j.lostAcceleratorSeconds;
    demand += j.demandAcceleratorSeconds;
    preemptions += j.preemptions;
    moves += j.moves ?? 0;
  }
  // Per-flavor use is attributed to the flavor of each job's last run (exact unless a job changed flavor after a preemption or a move).
  for (const j of jobs) if (j.flavor !== null) heldByFlavor[j.flavor] = (heldByFlavor[j.flavor] ?? 0) + j.acceleratorSeconds;
  const utilizationByFlavor: Record<string, number> = {};
  for (const [flavor, cap] of Object.entries(result.capacityByFlavor)) {
    utilizationByFlavor[flavor] = makespan > 0 && cap > 0 ? (heldByFlavor[flavor] ?? 0) / (cap * makespan) : 0;
  }

  const quotaByTeam = new Map<string, number>();
  for (const q of tenancy.quotas) quotaByTeam.set(q.team, (quotaByTeam.get(q.team) ?? 0) + q.nominal);
  const totalQuota = [...quotaByTeam.values()].reduce((a, b) => a + b, 0);
  const byTeam = new Map<string, JobOutcome[]>();
  for (const j of jobs) {
    const list = byTeam.get(j.team) ?? [];
    list.push(j);
    byTeam.set(j.team, list);
  }
  const teams: Record<string, TeamMetrics> = {};
  const ratios: number[] = [];
  for (const team of [...byTeam.keys()].sort()) {
    const list = byTeam.get(team)!;
    let held = 0;
    let pre = 0;
    let lostHere = 0;
    for (const j of list) {
      held += j.acceleratorSeconds;
      pre += j.preemptions;
      lostHere += j.lostAcceleratorSeconds;
    }
    const usageShare = heldTotal > 0 ? held / heldTotal : 0;
    const quotaShare = totalQuota > 0 ? (quotaByTeam.get(team) ?? 0) / totalQuota : 0;
    const ratio = quotaShare > 0 ? usageShare / quotaShare : null;
    if (ratio !== null) ratios.push(ratio);
    teams[team] = {
      jobs: list.length,
      completed: list.filter((j) => j.endSeconds !== null).length,
      queueingDelaySeconds: distribution(collect(list, delay)),
      jctSeconds: distribution(collect(list, jct)),
      acceleratorHours: held / 3600,
      usageShare,
      quotaShare,
      usageOverQuotaShare: ratio,
      preemptions: pre,
      lostAcceleratorHours: lostHere / 3600,
    };
  }

  const bySize = new Map<number, JobOutcome[]>();
  for (const j of jobs) {
    const list = bySize.get(j.accelerators) ?? [];
    list.push(j);
    bySize.set(j.accelerators, list);
  }
  const byGangSize: Metrics['byGangSize'] = {};
  for (const size of [...bySize.keys()].sort((a, b) => a - b)) {
    const list = bySize.get(size)!;
    byGangSize[String(size)] = {
      jobs: list.length,
      meanJctSeconds: distribution(collect(list, jct)).mean,
      meanQueueingDelaySeconds: distribution(collect(list, delay)).mean,
    };
  }

  const large = jobs.filter((j) => j.accelerators >= LARGE_GANG);
  // A large gang that never started waited until the end of the simulation.
  const largeWaits = large.map((j) => delay(j) ?? makespan - j.submitSeconds);
  const largeDist = distribution(largeWaits);

  return {
    overall: {
      jobs: jobs.length,
      completed: jobs.filter((j) => j.endSeconds !== null).length,
      unfinished: result.unfinished.length,
      rejected: result.rejected.length,
      queueingDelaySeconds: distribution(collect(jobs, delay)),
      jctSeconds: distribution(collect(jobs, jct)),
      utilization: makespan > 0 && result.capacity > 0 ? heldTotal / (result.capacity * makespan) : 0,
      usefulUtilization: makespan > 0 && result.capacity > 0 ? (heldTotal - lost) / (result.capacity * makespan) : 0,
      utilizationByFlavor,
      utilizationWhileQueued: result.utilizationWhileQueued,
      preemptions,
      moves,
      lostAcceleratorHours: lost / 3600,
      demandAcceleratorHours: demand / 3600,
      largeGang: { minAccelerators: LARGE_GANG, jobs: large.length, longestWaitSeconds: largeDist.max, meanWaitSeconds: largeDist.mean },
      jainFairness: jainIndex(ratios),
      makespanSeconds: makespan,
      cycles: result.cycles,
      coreSeconds: result.coreMillis / 1000,
    },
    teams,
    byGangSize,
    rejected: result.rejected,
    unfinished: result.unfinished,
  };
}
