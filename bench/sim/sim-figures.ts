// What every bench:sim scenario shares: the simulator's input settings and the figures printed per policy run.
import { DEFAULT_OPTIONS } from '#core';
import type { PolicyRun, SimInput } from '#sim';

export const round = (v: number, d = 2): number => Math.round(v * 10 ** d) / 10 ** d;

/** Grace period of checkpointing jobs (preempted or moved: they run on this long and checkpoint at its end); 0 = none. */
export const GRACE_SECONDS = Number(process.env.BENCH_SIM_GRACE_SECONDS ?? 0);

/** Checkpoint interval of the `full+checkpoint` runs (every job checkpoints this often; victims are chosen by work lost). */
export const CHECKPOINT_SECONDS = Number(process.env.BENCH_SIM_CHECKPOINT_SECONDS ?? 1800);

export function figures(run: PolicyRun): Record<string, number> {
  const o = run.metrics.overall;
  return {
    wallSeconds: round(run.wallSeconds, 1),
    cpuSeconds: round(run.cpuSeconds, 1),
    coreSeconds: round(o.coreSeconds, 1),
    cycles: o.cycles,
    maxPending: run.result.maxPending,
    slowestCycleMs: round(run.result.slowestCycleMillis, 1),
    completed: o.completed,
    unfinished: o.unfinished,
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
    demandGpuHours: round(o.demandAcceleratorHours, 0),
    largeGangJobs: o.largeGang.jobs,
    largeGangLongestWaitHours: round(o.largeGang.longestWaitSeconds / 3600, 2),
    largeGangMeanWaitHours: round(o.largeGang.meanWaitSeconds / 3600, 2),
    jain: round(o.jainFairness, 4),
    makespanDays: round(o.makespanSeconds / 86_400, 1),
  };
}

export function input(base: Omit<SimInput, 'config'>, checkpointIntervalSeconds = 0): SimInput {
  return {
    ...base,
    config: { cycleIntervalSeconds: 10, checkpointIntervalSeconds, checkpointGraceSeconds: GRACE_SECONDS, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS } },
  };
}
