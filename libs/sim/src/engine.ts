import type { CycleResult, PendingJob, RunningJob, Snapshot } from '#core';
import { EventQueue } from './event-queue.js';
import { SortedById } from './sorted-jobs.js';
import type { JobOutcome, Rejected, Scheduler, SimInput, SimJob, SimResult, Unfinished } from './types.js';
import { bindJobs } from './validate.js';

/**
 * Discrete-event simulation of a trace on a cluster, driven by the scheduling core.
 *
 * The virtual clock is integer milliseconds since the trace start; it only moves to the time of the
 * next event. Events: arrivals, completions and scheduling cycles (order at one instant: see
 * event-queue.ts). A cycle is scheduled only when something changed (an arrival, a completion, a
 * preemption), on the grid of `cycleIntervalSeconds`, so idle stretches cost nothing. A cycle hands
 * the core a Snapshot of the whole state and applies its decisions: preemptions first (the victim
 * loses the progress since its last checkpoint and is requeued keeping its submission time), then
 * admissions (a completion event at now + remaining work ÷ the flavor's rate).
 */
export interface SimHooks {
  /** Called now and then with (finished jobs, all jobs). */
  onProgress?: (done: number, total: number) => void;
  /** Wall clock for measuring the core (default performance.now). */
  wallClock?: () => number;
}

interface JobState {
  job: SimJob;
  spec: PendingJob;
  /** Work units left (decreases at preemption only by what was checkpointed). */
  remaining: number;
  /** Incremented at each admission; a completion event of an older run is stale. */
  run: number;
  running: RunningJob | null;
  runStartMs: number;
  outcome: JobOutcome;
}

const MS = 1000;

export function runSimulation(input: SimInput, scheduler: Scheduler, hooks: SimHooks = {}): SimResult & { rejected: Rejected[] } {
  const { cluster, tenancy, config } = input;
  const wall = hooks.wallClock ?? (() => performance.now());
  const intervalMs = Math.round(config.cycleIntervalSeconds * MS);
  const checkpointMs = Math.round(config.checkpointIntervalSeconds * MS);
  const minRuntimeMs = config.options.preemption ? config.options.minRuntimeBeforePreemptionSeconds * MS : 0;

  // Rows the parser rejected, then jobs that cannot run on this cluster/tenancy: all reported, none dropped silently.
  const rejected: Rejected[] = [...input.trace.rejected];
  const states = new Map<string, JobState>();
  const queue = new EventQueue();
  const bound = bindJobs(input.trace.jobs, cluster, tenancy);
  rejected.push(...bound.rejected);
  for (const job of bound.jobs) {
    if (states.has(job.id)) throw new Error(`duplicate job id ${job.id}`);
    const submitMs = Math.round(job.submitSeconds * MS);
    const accelerators = job.replicas * job.acceleratorsPerReplica;
    states.set(job.id, {
      job,
      spec: toPendingSpec(job, submitMs + input.epochMs, job.work, config.checkpointIntervalSeconds),
      remaining: job.work,
      run: 0,
      running: null,
      runStartMs: 0,
      outcome: {
        id: job.id,
        team: job.team,
        accelerators,
        submitSeconds: submitMs / MS,
        firstStartSeconds: null,
        endSeconds: null,
        preemptions: 0,
        flavor: null,
        acceleratorSeconds: 0,
        lostAcceleratorSeconds: 0,
      },
    });
    queue.push({ at: submitMs, kind: 'arrival', jobId: job.id, run: 0 });
  }

  // The core sorts these by name every cycle; sorted once here, its sorts are linear (same decisions).
  const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const flavors = [...cluster.flavors].sort(byName);
  const nodes = [...cluster.nodes].sort(byName);
  const cohorts = [...tenancy.cohorts].sort(byName);
  const teams = [...tenancy.teams].sort(byName);
  const quotas = [...tenancy.quotas].sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : a.flavor < b.flavor ? -1 : a.flavor > b.flavor ? 1 : 0));
  const pending = new SortedById<PendingJob>();
  const running = new SortedById<RunningJob>();
  const capacityByFlavor: Record<string, number> = {};
  for (const node of cluster.nodes) capacityByFlavor[node.flavor] = (capacityByFlavor[node.flavor] ?? 0) + node.accelerators;
  const capacity = Object.values(capacityByFlavor).reduce((a, b) => a + b, 0);

  let now = 0;
  let allocated = 0;
  const allocation: { seconds: number; allocated: number }[] = [{ seconds: 0, allocated: 0 }];
  const preemptionTimes: number[] = [];
  let nextCycleAt: number | null = null;
  let cycles = 0;
  let coreMillis = 0;
  let maxPending = 0;
  let slowestCycleMillis = 0;
  let slowestCyclePending = 0;
  let done = 0;
  /** Time with at least one job waiting, and the accelerators allocated meanwhile (× ms). */
  let queuedMs = 0;
  let queuedAllocatedMs = 0;
  let lastPending: CycleResult['pending'] = [];
  const total = states.size;

  const recordAllocation = (): void => {
    const last = allocation[allocation.length - 1]!;
    const seconds = now / MS;
    if (last.seconds === seconds) last.allocated = allocated;
    else if (last.allocated !== allocated) allocation.push({ seconds, allocated });
  };
  const requestCycle = (fromMs: number): void => {
    const at = intervalMs > 0 ? Math.ceil(fromMs / intervalMs) * intervalMs : fromMs;
    if (nextCycleAt !== null && nextCycleAt <= at) return;
    nextCycleAt = at;
    queue.push({ at, kind: 'cycle', jobId: '', run: 0 });
  };

  const release = (state: JobState): void => {
    const run = state.running!;
    running.delete(state.job.id);
    state.running = null;
    allocated -= run.replicas * run.acceleratorsPerReplica;
    state.outcome.acceleratorSeconds += ((now - state.runStartMs) / MS) * run.replicas * run.acceleratorsPerReplica;
  };

  const preempt = (jobId: string): void => {
    const state = states.get(jobId);
    if (state?.running === undefined || state.running === null) throw new Error(`the core preempted ${jobId}, which is not running`);
    const flavor = state.running.flavor;
    const elapsedMs = now - state.runStartMs;
    const keptMs = checkpointMs > 0 ? Math.floor(elapsedMs / checkpointMs) * checkpointMs : 0;
    const accelerators = state.outcome.accelerators;
    release(state);
    state.remaining = Math.max(0, state.remaining - (keptMs / MS) * state.job.rates[flavor]!);
    state.outcome.lostAcceleratorSeconds += ((elapsedMs - keptMs) / MS) * accelerators;
    state.outcome.preemptions += 1;
    state.run += 1;
    state.spec = { ...toPendingSpec(state.job, state.spec.submittedAt, state.remaining, config.checkpointIntervalSeconds), queuedAt: now + input.epochMs };
    pending.set(state.spec);
    preemptionTimes.push(now / MS);
  };

  const admit = (decision: CycleResult['admissions'][number]): void => {
    const state = states.get(decision.jobId);
    if (state === undefined || !pending.has(decision.jobId)) throw new Error(`the core admitted ${decision.jobId}, which is not pending`);
    const job = state.job;
    if (decision.replicas !== job.replicas) throw new Error(`the core admitted ${decision.replicas} of ${job.replicas} replicas of rigid gang ${job.id}`);
    const rate = job.rates[decision.flavor];
    if (rate === undefined) throw new Error(`the core admitted ${job.id} on flavor ${decision.flavor}, which it does not accept`);
    const runMs = Math.max(1, Math.ceil((state.remaining / rate) * MS));
    pending.delete(job.id);
    state.run += 1;
    state.runStartMs = now;
    state.outcome.flavor = decision.flavor;
    if (state.outcome.firstStartSeconds === null) state.outcome.firstStartSeconds = now / MS;
    state.running = {
      ...state.spec,
      flavor: decision.flavor,
      placement: decision.placement,
      admittedAt: now + input.epochMs,
      // On its fastest flavor, as the core expects of a job with speeds (it scales it to this flavor's rate).
      expectedRuntimeSeconds: state.remaining / bestRate(job),
      // Kept for the core so that a victim never preempts its own preemptor back.
      ...(decision.preempts.length > 0 ? { preempted: decision.preempts } : {}),
    };
    running.set(state.running);
    allocated += job.replicas * job.acceleratorsPerReplica;
    queue.push({ at: now + runMs, kind: 'completion', jobId: job.id, run: state.run });
  };

  const cycle = (): void => {
    nextCycleAt = null;
    if (pending.size === 0) return;
    const snapshot: Snapshot = {
      now: now + input.epochMs,
      flavors,
      nodes,
      cohorts,
      teams,
      quotas,
      running: running.toArray(),
      pending: pending.toArray(),
      options: config.options,
    };
    const started = wall();
    const result = scheduler(snapshot);
    const took = wall() - started;
    coreMillis += took;
    cycles += 1;
    if (took > slowestCycleMillis) {
      slowestCycleMillis = took;
      slowestCyclePending = pending.size;
    }
    for (const p of result.preemptions) preempt(p.victimJobId);
    for (const a of result.admissions) admit(a);
    lastPending = result.pending;
    recordAllocation();
    // Victims may fit elsewhere, and jobs held back only by the per-team admission limit may start in
    // the next cycle: either way, one more cycle a grid step later (nothing else would trigger it).
    if (result.preemptions.length > 0 || result.pending.some((p) => p.code === 'ADMISSION_LIMIT')) requestCycle(now + Math.max(intervalMs, MS));
    if (minRuntimeMs > 0 && pending.size > 0) {
      let soonest = Infinity;
      for (const r of running.values()) {
        const eligible = r.admittedAt - input.epochMs + minRuntimeMs;
        if (eligible > now && eligible < soonest) soonest = eligible;
      }
      if (soonest !== Infinity) requestCycle(soonest);
    }
  };

  let events = 0;
  for (let event = queue.pop(); event !== undefined; event = queue.pop()) {
    if (event.at < now) throw new Error(`virtual clock would go back from ${now} to ${event.at}`);
    // A completion of a run that was preempted is stale: dropped before the clock moves to it (the
    // run that replaced it may well end earlier, e.g. on a faster flavor or from a checkpoint).
    if (event.kind === 'completion' && isStale(states.get(event.jobId)!, event.run)) continue;
    if (pending.size > 0 && event.at > now) {
      queuedMs += event.at - now;
      queuedAllocatedMs += (event.at - now) * allocated;
    }
    now = event.at;
    events += 1;
    switch (event.kind) {
      case 'completion': {
        const state = states.get(event.jobId)!;
        release(state);
        state.remaining = 0;
        state.outcome.endSeconds = now / MS;
        done += 1;
        recordAllocation();
        requestCycle(now);
        break;
      }
      case 'arrival': {
        const state = states.get(event.jobId)!;
        pending.set(state.spec);
        if (pending.size > maxPending) maxPending = pending.size;
        requestCycle(now);
        break;
      }
      case 'cycle':
        cycle();
        break;
      default: {
        const never: never = event.kind;
        throw new Error(`unknown event ${String(never)}`);
      }
    }
    if (hooks.onProgress !== undefined && (events & 1023) === 0) hooks.onProgress(done, total);
  }
  hooks.onProgress?.(done, total);

  const reasons = new Map(lastPending.map((p) => [p.jobId, `${p.code}: ${p.message}`]));
  const unfinished: Unfinished[] = [];
  for (const state of states.values()) {
    if (state.outcome.endSeconds === null) {
      unfinished.push({
        id: state.job.id,
        line: state.job.line,
        team: state.job.team,
        reason: reasons.get(state.job.id) ?? 'never admitted',
      });
    }
  }
  return {
    jobs: Array.from(states.values(), (s) => s.outcome),
    unfinished,
    rejected,
    allocation,
    preemptionTimes,
    capacity,
    capacityByFlavor,
    endSeconds: now / MS,
    cycles,
    coreMillis,
    maxPending,
    slowestCycleMillis,
    slowestCyclePending,
    queuedSeconds: queuedMs / MS,
    utilizationWhileQueued: queuedMs > 0 && capacity > 0 ? queuedAllocatedMs / (queuedMs * capacity) : 0,
  };
}

/** Whether a completion event belongs to a run that no longer exists (it was preempted). */
function isStale(state: JobState, run: number): boolean {
  return run !== state.run || state.running === null;
}

/** The job's rate on its fastest acceptable flavor. */
function bestRate(job: SimJob): number {
  let best = 0;
  for (const f of job.flavors) best = Math.max(best, job.rates[f]!);
  return best;
}

/** The core's view of a job waiting with `remaining` units of work left. */
export function toPendingSpec(job: SimJob, submittedAt: number, remaining: number, checkpointSeconds = 0): PendingJob {
  return {
    // Jobs checkpoint every `checkpointSeconds` (SimConfig): the core then picks victims by the work they would lose.
    ...(checkpointSeconds > 0 ? { checkpoint: { intervalSeconds: checkpointSeconds, gracePeriodSeconds: 0 } } : {}),
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
  };
}
