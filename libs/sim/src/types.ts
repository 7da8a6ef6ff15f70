import type { ClusterNode, Cohort, CycleResult, Flavor, Quota, SchedulerOptions, Snapshot, Team } from '#core';

/**
 * One job of a trace, as the simulator replays it.
 *
 * Work is measured in abstract units that each flavor processes at `rate(flavor)` units per second:
 * - Philly: work = the traced duration in seconds, rate = the flavor's `relativeSpeed` (1.0 = as traced);
 * - Gavel: work = total steps, rate = measured steps/s of the job type at its scale on that flavor.
 * So the run time of a job depends on the flavor the scheduler picks.
 */
export interface SimJob {
  /** Unique, zero-padded so that lexicographic order is input order (the tie-break everywhere). */
  id: string;
  /** 1-based line of the source file (for messages). */
  line: number;
  source: string;
  team: string;
  /** Virtual seconds since the start of the trace. */
  submitSeconds: number;
  replicas: number;
  acceleratorsPerReplica: number;
  /** Acceptable flavors, most preferred first. */
  flavors: string[];
  /** Units of work; see above. Positive. */
  work: number;
  /** Units per second on each acceptable flavor (positive). */
  rates: Record<string, number>;
  priority: number;
  preemptible: boolean;
  /** Gavel job type or similar, for reports. */
  label?: string;
  /**
   * Already running when the simulation starts (a replay from a cluster's state, `qm simulate --from-db`):
   * on `flavor` since `startSeconds` (≤ 0), with `work` the part still to do. The engine places it at
   * virtual time 0 (first fit on the flavor's nodes, by name) before anything else; if it no longer fits
   * the fleet, it waits like the others. A job with a negative `submitSeconds` and no `runningAtStart`
   * was waiting when the simulation starts: it is queued at 0 and keeps its submission time.
   */
  runningAtStart?: { flavor: string; startSeconds: number };
}

/** A trace row that could not be turned into a job, reported (never silently dropped). */
export interface Rejected {
  line: number;
  source: string;
  reason: string;
}

export interface Trace {
  jobs: SimJob[];
  rejected: Rejected[];
}

export interface ClusterSpec {
  flavors: Flavor[];
  nodes: ClusterNode[];
}

export interface TenancySpec {
  cohorts: Cohort[];
  teams: Team[];
  quotas: Quota[];
}

export interface SimConfig {
  /**
   * Scheduling cycles run on a grid of this many virtual seconds, only when something changed
   * (an arrival, a completion, a preemption). 0 = a cycle at the very instant of each change.
   */
  cycleIntervalSeconds: number;
  /** A preempted job keeps the progress up to its last checkpoint; 0 = restarts from scratch. */
  checkpointIntervalSeconds: number;
  /**
   * Grace period of a checkpointing job (with `checkpointIntervalSeconds` > 0; absent or 0 = none): when it is
   * preempted or moved it keeps its accelerators and runs for this long, checkpointing at its end, and the
   * job that takes its place starts then (a victim is queued again then, too).
   */
  checkpointGraceSeconds?: number;
  /** Width of the utilization time series buckets in the result (seconds). 0 = automatic. */
  seriesBucketSeconds: number;
  options: SchedulerOptions;
}

export interface SimInput {
  trace: Trace;
  cluster: ClusterSpec;
  tenancy: TenancySpec;
  config: SimConfig;
  /** Epoch ms of virtual time 0 (what the core sees as `now`); e.g. the first arrival of the trace. */
  epochMs: number;
}

/** What happened to one job. Times in virtual seconds since the trace start. */
export interface JobOutcome {
  id: string;
  team: string;
  accelerators: number;
  submitSeconds: number;
  /** First admission; null = never started. */
  firstStartSeconds: number | null;
  /** null = did not finish (see `unfinished`). */
  endSeconds: number | null;
  preemptions: number;
  /** Times it was moved to a faster flavor (not counted in `preemptions`). */
  moves: number;
  /** Flavor of the run that completed (or of the last run). */
  flavor: string | null;
  /** Accelerator-seconds held, including runs that were preempted. */
  acceleratorSeconds: number;
  /** Accelerator-seconds of runs whose progress was lost to preemption. */
  lostAcceleratorSeconds: number;
  /** Accelerator-seconds of work it asks for: its accelerators × its run time on its fastest acceptable flavor. */
  demandAcceleratorSeconds: number;
}

export interface Unfinished {
  id: string;
  line: number;
  team: string;
  /** Code and message of the last pending reason the core gave. */
  reason: string;
}

export interface SimResult {
  jobs: JobOutcome[];
  unfinished: Unfinished[];
  /** Step function of allocated accelerators per flavor: [seconds, allocated] at each change. */
  allocation: { seconds: number; allocated: number }[];
  /** Seconds at which each preemption happened. */
  preemptionTimes: number[];
  capacity: number;
  capacityByFlavor: Record<string, number>;
  endSeconds: number;
  cycles: number;
  /** Wall milliseconds spent inside the scheduling core. */
  coreMillis: number;
  maxPending: number;
  /** Slowest cycles: wall ms and pending size, for performance reports. */
  slowestCycleMillis: number;
  slowestCyclePending: number;
  /** Virtual seconds during which at least one job was waiting. */
  queuedSeconds: number;
  /** Mean fraction of accelerators allocated while at least one job was waiting (idle capacity despite demand lowers it). */
  utilizationWhileQueued: number;
}

/** The scheduling core's entry point (`runCycle` from `#core`); injectable for tests of the engine. */
export type Scheduler = (snapshot: Snapshot) => CycleResult;
