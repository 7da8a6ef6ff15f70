import type { Metrics } from './metrics.js';

/** Most of the demanded accelerator-hours preemption may throw away (work since the victims' last checkpoints). */
export const MAX_DISCARDED_SHARE = 0.02;

export interface PreemptionFigures {
  /** Accelerator-hours the jobs ask for. */
  demandGpuHours: number;
  discardedGpuHours: number;
  /** discardedGpuHours ÷ demandGpuHours. */
  discardedShare: number;
  preemptions: number;
  meanWaitHours: number;
  p99WaitHours: number;
  /** Longest wait of a gang of ≥ 32 accelerators. */
  largeGangLongestWaitHours: number;
}

export interface PreemptionGate {
  full: PreemptionFigures;
  noPreemption: PreemptionFigures;
  /** What failed, in words; empty when preemption pays. */
  failed: string[];
}

const round = (v: number, d: number): number => Math.round(v * 10 ** d) / 10 ** d;

function figuresOf(m: Metrics): PreemptionFigures {
  const o = m.overall;
  return {
    demandGpuHours: round(o.demandAcceleratorHours, 0),
    discardedGpuHours: round(o.lostAcceleratorHours, 0),
    discardedShare: o.demandAcceleratorHours > 0 ? round(o.lostAcceleratorHours / o.demandAcceleratorHours, 5) : 0,
    preemptions: o.preemptions,
    meanWaitHours: round(o.queueingDelaySeconds.mean / 3600, 4),
    p99WaitHours: round(o.queueingDelaySeconds.p99 / 3600, 3),
    largeGangLongestWaitHours: round(o.largeGang.longestWaitSeconds / 3600, 2),
  };
}

/**
 * The quality gate on preemption, for one replay of a contended trace under `full` and under
 * `no-preemption`: preemption must not throw away more than MAX_DISCARDED_SHARE of the demanded
 * accelerator-hours, and must not make jobs wait longer on average than not preempting at all.
 * Deterministic figures of the simulator only (no timing).
 */
export function preemptionGate(full: Metrics, noPreemption: Metrics): PreemptionGate {
  const f = figuresOf(full);
  const n = figuresOf(noPreemption);
  const failed: string[] = [];
  if (f.discardedShare > MAX_DISCARDED_SHARE) {
    failed.push(
      `full discards ${f.discardedGpuHours} of ${f.demandGpuHours} demanded GPU-hours (${round(f.discardedShare * 100, 2)} %, more than ${MAX_DISCARDED_SHARE * 100} %)`,
    );
  }
  if (full.overall.queueingDelaySeconds.mean > noPreemption.overall.queueingDelaySeconds.mean) {
    failed.push(`full waits ${f.meanWaitHours} h on average, longer than no-preemption's ${n.meanWaitHours} h`);
  }
  return { full: f, noPreemption: n, failed };
}
