import type { JobSpec } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB } from './quantity.js';

/** One replica's share of a node: its index in the cycle's node table, and what it holds there. */
export interface HeldReplica {
  node: number;
  a: Accelerators;
  c: CpuMillis;
  m: MemoryMiB;
}

/** A job holding capacity: running at snapshot time or admitted in this cycle. */
export interface Holding {
  job: JobSpec;
  flavor: string;
  replicas: HeldReplica[];
  /** Σ accelerators over replicas. */
  accelerators: Accelerators;
  admittedAt: number;
  /** Epoch ms of its last checkpoint (admission when it does not checkpoint): preempting it loses the work since. */
  checkpointAt: number;
  /** Expected end, epoch ms (never before `now`). */
  end: number;
  admittedThisCycle: boolean;
  removed: boolean;
  /** Ids this job preempted when admitted (RunningJob.preempted): never its victims. */
  preempted?: readonly string[];
  /** Epoch ms of its latest preemption (RunningJob.lastPreemptedAt), if any. */
  lastPreemptedAt?: number;
  /** Preempted for good in this cycle (not a tentative release). */
  evicted?: boolean;
  /** Already in the per-team and timeline lists (they keep removed entries, flagged). */
  indexed?: boolean;
}

/** CPU and memory over `replicas` (what a holding charges to its team's caps). */
export function cpuAndMemoryHeld(replicas: readonly HeldReplica[]): { c: CpuMillis; m: MemoryMiB } {
  let c = 0;
  let m = 0;
  for (const r of replicas) {
    c += r.c;
    m += r.m;
  }
  return { c, m };
}
