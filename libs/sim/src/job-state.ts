import type { PendingJob, ReplicaPlacement, RunningJob } from '#core';
import type { JobOutcome, SimJob } from './types.js';

const MS = 1000;

/** One job of a simulation: what the core sees of it, its remaining work, its current run and its outcome so far. */
export interface JobState {
  job: SimJob;
  spec: PendingJob;
  /** Work units left (decreases at preemption only by what was checkpointed). */
  remaining: number;
  /** Incremented at each admission; a completion event of an older run is stale. */
  run: number;
  running: RunningJob | null;
  runStartMs: number;
  /** Epoch ms of its latest preemption (the core's RunningJob.lastPreemptedAt), if any. */
  lastPreemptedAt?: number;
  outcome: JobOutcome;
}

/** A job of the trace before its arrival: all of its work left, never started. */
export function newJobState(job: SimJob, epochMs: number, checkpointIntervalSeconds: number, graceSeconds = 0): JobState {
  const submitMs = Math.round(job.submitSeconds * MS);
  return {
    job,
    spec: toPendingSpec(job, submitMs + epochMs, job.work, checkpointIntervalSeconds, graceSeconds),
    remaining: job.work,
    run: 0,
    running: null,
    runStartMs: 0,
    lastPreemptedAt: undefined,
    outcome: {
      id: job.id,
      team: job.team,
      accelerators: job.replicas * job.acceleratorsPerReplica,
      submitSeconds: submitMs / MS,
      firstStartSeconds: null,
      endSeconds: null,
      preemptions: 0,
      moves: 0,
      flavor: null,
      acceleratorSeconds: 0,
      lostAcceleratorSeconds: 0,
      demandAcceleratorSeconds: job.replicas * job.acceleratorsPerReplica * (job.work / bestRate(job)),
    },
  };
}

/** Whether a completion event belongs to a run that no longer exists (it was preempted). */
export function isStale(state: JobState, run: number): boolean {
  return run !== state.run || state.running === null;
}

/** The job's rate on its fastest acceptable flavor. */
export function bestRate(job: SimJob): number {
  let best = 0;
  for (const f of job.flavors) best = Math.max(best, job.rates[f]!);
  return best;
}

/** The core's view of a job waiting with `remaining` units of work left (`queuedAt`: when it was requeued after a preemption). */
export function toPendingSpec(job: SimJob, submittedAt: number, remaining: number, checkpointSeconds = 0, graceSeconds = 0, queuedAt?: number): PendingJob {
  return {
    // Jobs checkpoint every `checkpointSeconds` (SimConfig): the core then picks victims by the work they would lose.
    ...(checkpointSeconds > 0 ? { checkpoint: { intervalSeconds: checkpointSeconds, gracePeriodSeconds: Math.max(0, graceSeconds) } } : {}),
    id: job.id,
    name: job.id,
    team: job.team,
    kind: 'training',
    priority: job.priority,
    preemptible: job.preemptible,
    replicas: job.replicas,
    minReplicas: job.replicas,
    acceleratorsPerReplica: job.acceleratorsPerReplica,
    cpuMillisPerReplica: 0,
    memoryMiBPerReplica: 0,
    flavors: job.flavors,
    flavorSelection: 'fastest',
    speeds: job.rates,
    topology: { level: 'none' },
    // Oracle runtime on the fastest acceptable flavor; the core scales it by the job's speed on each flavor.
    expectedRuntimeSeconds: Math.max(1, Math.ceil(remaining / bestRate(job))),
    submittedAt,
    ...(queuedAt !== undefined ? { queuedAt } : {}),
  };
}

/**
 * The core's view of a job running on `flavor`: the spec's fields and the run's, written out one by one.
 * Not `{ ...spec, ... }`: V8 copies a spread of an object this large through a slow path that gives every
 * copy a hidden class of its own, and the core reads each running job every cycle through property loads
 * that then never hit a cache (about half the cost of the Philly replay). Every running job has this one
 * shape; `checkpoint`, `preempted` and `lastPreemptedAt` are undefined when absent (the core reads them with `?.`/`=== undefined`).
 */
export function toRunningJob(
  spec: PendingJob,
  flavor: string,
  placement: ReplicaPlacement[],
  admittedAt: number,
  expectedRuntimeSeconds: number,
  preempted: string[] | undefined,
  lastPreemptedAt?: number,
): RunningJob {
  return {
    checkpoint: spec.checkpoint,
    id: spec.id,
    name: spec.name,
    team: spec.team,
    kind: spec.kind,
    priority: spec.priority,
    preemptible: spec.preemptible,
    replicas: spec.replicas,
    minReplicas: spec.minReplicas,
    acceleratorsPerReplica: spec.acceleratorsPerReplica,
    cpuMillisPerReplica: spec.cpuMillisPerReplica,
    memoryMiBPerReplica: spec.memoryMiBPerReplica,
    flavors: spec.flavors,
    flavorSelection: spec.flavorSelection,
    speeds: spec.speeds,
    topology: spec.topology,
    expectedRuntimeSeconds,
    submittedAt: spec.submittedAt,
    flavor,
    placement,
    admittedAt,
    preempted,
    lastPreemptedAt,
  };
}
