import { resolveMoveOptions, type ClusterNode, type Cohort, type CycleResult, type Flavor, type PendingJob, type Quota, type ReplicaPlacement, type RunningJob, type Snapshot, type Team } from '#core';
import { EventQueue, type SimEvent } from './event-queue.js';
import { type JobState, bestRate, isStale, newJobState, toPendingSpec, toRunningJob } from './job-state.js';
import { RunStats } from './run-stats.js';
import { SortedById } from './sorted-jobs.js';
import { GraceRoom, Terminating } from './terminating.js';
import type { ClusterSpec, Rejected, Scheduler, SimInput, SimResult, TenancySpec, Unfinished } from './types.js';
import { bindJobs } from './validate.js';

export { toPendingSpec } from './job-state.js';

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
 *
 * `runSimulation` in three steps: bind the trace to the cluster (`Simulation`'s constructor: jobs that
 * cannot run are rejected, each other one gets an arrival event), run the event loop (`run`: one
 * handler per kind of event; a cycle is snapshot → core → apply preemptions → apply admissions →
 * follow-up cycles), and collect the outcome (`result`).
 */
export interface SimHooks {
  /** Called now and then with (finished jobs, all jobs). */
  onProgress?: (done: number, total: number) => void;
  /** Wall clock for measuring the core (default performance.now). */
  wallClock?: () => number;
}

const MS = 1000;

export function runSimulation(input: SimInput, scheduler: Scheduler, hooks: SimHooks = {}): SimResult & { rejected: Rejected[] } {
  const sim = new Simulation(input, scheduler, hooks);
  sim.run();
  return sim.result();
}

/** The fleet and tenancy as the core takes them, sorted once by name (the core's sorts are then linear). */
interface CoreWorld {
  flavors: Flavor[];
  nodes: ClusterNode[];
  cohorts: Cohort[];
  teams: Team[];
  quotas: Quota[];
}

function sortedForCore(cluster: ClusterSpec, tenancy: TenancySpec): CoreWorld {
  const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {
    flavors: [...cluster.flavors].sort(byName),
    nodes: [...cluster.nodes].sort(byName),
    cohorts: [...tenancy.cohorts].sort(byName),
    teams: [...tenancy.teams].sort(byName),
    quotas: [...tenancy.quotas].sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : a.flavor < b.flavor ? -1 : a.flavor > b.flavor ? 1 : 0)),
  };
}

class Simulation {
  private readonly intervalMs: number;
  private readonly checkpointMs: number;
  /** Grace period of checkpointing jobs (SimConfig.checkpointGraceSeconds), 0 without checkpoints. */
  private readonly graceSeconds: number;
  private readonly minRuntimeMs: number;
  /**
   * What starting again costs a job that ran before — moved, or preempted and admitted again — besides any grace
   * period (the core's `moves.restartSeconds`, as its move estimate counts it): it holds its new accelerators this
   * long before it makes progress again (pod start, checkpoint load). A trace's run time holds one start, the first.
   */
  private readonly restartMs: number;
  private readonly wall: () => number;
  /** Rows the parser rejected, then jobs that cannot run on this cluster/tenancy: all reported, none dropped silently. */
  private readonly rejected: Rejected[];
  private readonly states = new Map<string, JobState>();
  private readonly queue = new EventQueue();
  private readonly world: CoreWorld;
  private readonly pending = new SortedById<PendingJob>();
  private readonly running = new SortedById<RunningJob>();
  private readonly capacityByFlavor: Record<string, number> = {};
  private readonly capacity: number;
  private readonly stats = new RunStats();
  /** Virtual ms since the trace start. */
  private now = 0;
  /** Accelerators held by running jobs. */
  private allocated = 0;
  /** Accelerators held by running jobs, per node. */
  private readonly heldOn = new Map<string, number>();
  /** Allocatable accelerators per node. */
  private readonly allocatable = new Map<string, number>();
  /** What preempted and moved jobs hold through their grace period. */
  private readonly terminating = new Terminating();
  private nextCycleAt: number | null = null;
  private done = 0;
  private lastPending: CycleResult['pending'] = [];

  constructor(
    private readonly input: SimInput,
    private readonly scheduler: Scheduler,
    private readonly hooks: SimHooks,
  ) {
    const { cluster, tenancy, config } = input;
    this.wall = hooks.wallClock ?? (() => performance.now());
    this.intervalMs = Math.round(config.cycleIntervalSeconds * MS);
    this.checkpointMs = Math.round(config.checkpointIntervalSeconds * MS);
    this.graceSeconds = this.checkpointMs > 0 ? Math.max(0, config.checkpointGraceSeconds ?? 0) : 0;
    this.minRuntimeMs = config.options.preemption ? config.options.minRuntimeBeforePreemptionSeconds * MS : 0;
    this.restartMs = Math.round(resolveMoveOptions(config.options.moves).restartSeconds * MS);
    this.rejected = [...input.trace.rejected];
    const bound = bindJobs(input.trace.jobs, cluster, tenancy);
    this.rejected.push(...bound.rejected);
    const runningAtStart: JobState[] = [];
    for (const job of bound.jobs) {
      if (this.states.has(job.id)) throw new Error(`duplicate job id ${job.id}`);
      const state = newJobState(job, input.epochMs, config.checkpointIntervalSeconds, this.graceSeconds);
      this.states.set(job.id, state);
      if (job.runningAtStart !== undefined) runningAtStart.push(state);
      else this.arriveAt(job.submitSeconds, job.id);
    }
    this.world = sortedForCore(cluster, tenancy);
    for (const n of this.world.nodes) this.allocatable.set(n.name, n.accelerators);
    for (const node of cluster.nodes) this.capacityByFlavor[node.flavor] = (this.capacityByFlavor[node.flavor] ?? 0) + node.accelerators;
    this.capacity = Object.values(this.capacityByFlavor).reduce((a, b) => a + b, 0);
    this.restoreRunning(runningAtStart);
  }

  /** An arrival event; a job submitted before the simulation starts (a replay from a cluster's state) arrives at 0. */
  private arriveAt(submitSeconds: number, jobId: string): void {
    this.queue.push({ at: Math.max(0, Math.round(submitSeconds * MS)), kind: 'arrival', jobId, run: 0 });
  }

  /**
   * Jobs already running when the simulation starts hold their flavor from virtual time 0: placed first
   * fit on its schedulable nodes (by name), in id order. One that no longer fits waits like the others.
   */
  private restoreRunning(states: JobState[]): void {
    const free = new Map<string, number>();
    for (const n of this.world.nodes) if (n.schedulable) free.set(n.name, n.accelerators);
    for (const state of states) {
      const { job } = state;
      const { flavor, startSeconds } = job.runningAtStart!;
      const placement: ReplicaPlacement[] = [];
      if (job.flavors.includes(flavor)) {
        for (const n of this.world.nodes) {
          if (n.flavor !== flavor) continue;
          while (placement.length < job.replicas && (free.get(n.name) ?? 0) >= job.acceleratorsPerReplica) {
            free.set(n.name, free.get(n.name)! - job.acceleratorsPerReplica);
            placement.push({ replica: placement.length, node: n.name, accelerators: job.acceleratorsPerReplica, cpuMillis: 0, memoryMiB: 0 });
          }
          if (placement.length === job.replicas) break;
        }
      }
      if (placement.length === job.replicas) {
        this.startRun(state, flavor, placement, [], Math.max(0, -startSeconds));
      } else {
        for (const p of placement) free.set(p.node, free.get(p.node)! + p.accelerators);
        this.arriveAt(job.submitSeconds, job.id);
      }
    }
    this.stats.recordAllocation(this.now, this.allocated);
  }

  /** The event loop: until no event is left. */
  run(): void {
    const total = this.states.size;
    let events = 0;
    for (let event = this.queue.pop(); event !== undefined; event = this.queue.pop()) {
      if (event.at < this.now) throw new Error(`virtual clock would go back from ${this.now} to ${event.at}`);
      // A completion of a run that was preempted is stale: dropped before the clock moves to it (the
      // run that replaced it may well end earlier, e.g. on a faster flavor or from a checkpoint).
      if (event.kind === 'completion' && isStale(this.states.get(event.jobId)!, event.run)) continue;
      this.stats.elapse(this.now, event.at, this.pending.size, this.allocated);
      this.now = event.at;
      events += 1;
      this.handle(event);
      if (this.hooks.onProgress !== undefined && (events & 1023) === 0) this.hooks.onProgress(this.done, total);
    }
    this.hooks.onProgress?.(this.done, total);
  }

  private handle(event: SimEvent): void {
    switch (event.kind) {
      case 'completion':
        return this.complete(this.states.get(event.jobId)!);
      case 'arrival':
        return this.arrive(this.states.get(event.jobId)!);
      case 'cycle':
        return this.cycle();
      default: {
        const never: never = event.kind;
        throw new Error(`unknown event ${String(never)}`);
      }
    }
  }

  private complete(state: JobState): void {
    this.release(state);
    state.remaining = 0;
    state.outcome.endSeconds = this.now / MS;
    this.done += 1;
    this.stats.recordAllocation(this.now, this.allocated);
    this.requestCycle(this.now);
  }

  private arrive(state: JobState): void {
    this.pending.set(state.spec);
    this.stats.queueGrew(this.pending.size);
    this.requestCycle(this.now);
  }

  /**
   * A scheduling cycle: the core decides on a snapshot of the whole state; preemptions are applied first,
   * then admissions, then moves. With nothing pending a cycle still runs while a running job may move.
   */
  private cycle(): void {
    this.nextCycleAt = null;
    if (this.pending.size === 0 && !this.anyMayMove()) return;
    const snapshot = this.snapshot();
    const started = this.wall();
    const result = this.scheduler(snapshot);
    this.stats.cycleTook(this.wall() - started, this.pending.size);
    // A victim runs on through its grace period (the decision's, as the app evicts with it), holding its
    // accelerators: its preemptor starts after the longest of its victims', and so does any admission placed on
    // accelerators a victim still holds; what no admission took stays held until the period ends.
    const room = new GraceRoom(this.now, (node) => this.freeOn(node));
    const graceMs = new Map<string, number>();
    for (const p of result.preemptions) {
      const placement = this.states.get(p.victimJobId)?.running?.placement ?? [];
      room.note(placement);
      const ms = this.preempt(p.victimJobId, false, p.gracePeriodSeconds ?? 0);
      graceMs.set(p.victimJobId, ms);
      room.leave(placement, this.now + ms);
    }
    for (const a of result.admissions) this.admit(a, Math.max(0, room.take(a.placement), ...a.preempts.map((v) => graceMs.get(v) ?? 0)));
    // A move: the job is preempted (keeping its last checkpoint, or running on through its grace period and
    // checkpointing at its end) and admitted again on the faster flavor, where it makes progress again once that
    // period and its restart are over.
    for (const m of result.moves ?? []) {
      const placement = this.states.get(m.jobId)?.running?.placement ?? [];
      room.note(placement);
      const delay = this.preempt(m.jobId, true, m.gracePeriodSeconds);
      room.leave(placement, this.now + delay);
      this.admit({ jobId: m.jobId, team: m.team, flavor: m.to, replicas: m.replicas, placement: m.placement, borrowed: m.borrowed, preempts: [] }, Math.max(delay, room.take(m.placement)));
    }
    for (const h of room.leftovers()) {
      this.terminating.add(h.untilMs, h.node, h.accelerators);
      this.requestCycle(h.untilMs);
    }
    this.lastPending = result.pending;
    this.stats.recordAllocation(this.now, this.allocated);
    this.requestFollowUps(result);
  }

  /** Accelerators of `node` that no job holds or is leaving now. */
  private freeOn(node: string): number {
    return (this.allocatable.get(node) ?? 0) - (this.heldOn.get(node) ?? 0) - this.terminating.on(node, this.now);
  }

  /** Whether a running job could move to a faster flavor (it checkpoints and accepts a faster one): moves.ts decides. */
  private anyMayMove(): boolean {
    if ((this.input.config.options.moves?.maxPerCycle ?? 1) <= 0) return false;
    for (const r of this.running.values()) {
      if (r.checkpoint === undefined || !r.preemptible || r.flavors.length < 2) continue;
      const here = r.speeds?.[r.flavor] ?? 0;
      if (r.flavors.some((f) => (r.speeds?.[f] ?? 0) > here)) return true;
    }
    return false;
  }

  private snapshot(): Snapshot {
    return {
      now: this.now + this.input.epochMs,
      ...this.world,
      nodes: this.terminating.nodes(this.world.nodes, this.now),
      running: this.running.toArray(),
      pending: this.pending.toArray(),
      options: this.input.config.options,
    };
  }

  /**
   * Cycles that nothing else would trigger: one a grid step later after preemptions (victims may fit
   * elsewhere) or when jobs wait only on the per-team admission limit; and, with a minimum runtime
   * before preemption, one when the next running job becomes preemptible.
   */
  private requestFollowUps(result: CycleResult): void {
    if (result.preemptions.length > 0 || result.pending.some((p) => p.code === 'ADMISSION_LIMIT')) {
      this.requestCycle(this.now + Math.max(this.intervalMs, MS));
    }
    if (this.minRuntimeMs > 0 && this.pending.size > 0) {
      let soonest = Infinity;
      for (const r of this.running.values()) {
        const eligible = r.admittedAt - this.input.epochMs + this.minRuntimeMs;
        if (eligible > this.now && eligible < soonest) soonest = eligible;
      }
      if (soonest !== Infinity) this.requestCycle(soonest);
    }
  }

  /** A cycle at the first grid instant at or after `fromMs`, unless one is already due by then. */
  private requestCycle(fromMs: number): void {
    const at = this.intervalMs > 0 ? Math.ceil(fromMs / this.intervalMs) * this.intervalMs : fromMs;
    if (this.nextCycleAt !== null && this.nextCycleAt <= at) return;
    this.nextCycleAt = at;
    this.queue.push({ at, kind: 'cycle', jobId: '', run: 0 });
  }

  /** The job's accelerators return to the fleet; the time it held them is counted. */
  private release(state: JobState): void {
    const run = state.running!;
    this.running.delete(state.job.id);
    state.running = null;
    this.allocated -= run.replicas * run.acceleratorsPerReplica;
    for (const p of run.placement) this.heldOn.set(p.node, (this.heldOn.get(p.node) ?? 0) - p.accelerators);
    state.outcome.acceleratorSeconds += (Math.max(0, this.now - state.runStartMs) / MS) * run.replicas * run.acceleratorsPerReplica;
  }

  /**
   * The victim (or a moved job) loses the progress since its last checkpoint and waits again, keeping its
   * submission time. With a grace period (checkpointing jobs, SimConfig.checkpointGraceSeconds, as the core's
   * decision gives it) it runs on for that long and checkpoints at its end, losing nothing; a victim is queued
   * again then (a moved job is admitted at once, starting then), and one whose work ends within the period
   * completes. Returns the grace period in ms: when the job that takes its accelerators may start.
   */
  private preempt(jobId: string, move = false, graceSeconds = 0): number {
    const state = this.states.get(jobId);
    if (state?.running === undefined || state.running === null) throw new Error(`the core preempted ${jobId}, which is not running`);
    const flavor = state.running.flavor;
    const rate = state.job.rates[flavor]!;
    const graceMs = this.graceSeconds > 0 && graceSeconds > 0 ? Math.round(Math.min(graceSeconds, this.graceSeconds) * MS) : 0;
    const elapsedMs = Math.max(0, this.now - state.runStartMs);
    const accelerators = state.outcome.accelerators;
    this.release(state);
    state.run += 1;
    if (graceMs > 0) {
      // Held (and running) through the grace period, checkpointing at its end.
      const finishMs = Math.max(1, Math.ceil((state.remaining / rate) * MS));
      const ranMs = Math.min(elapsedMs + graceMs, finishMs);
      state.outcome.acceleratorSeconds += ((ranMs - elapsedMs) / MS) * accelerators;
      if (ranMs >= finishMs) {
        state.remaining = 0;
        state.outcome.endSeconds = (this.now + ranMs - elapsedMs) / MS;
        this.done += 1;
        return ranMs - elapsedMs;
      }
      state.remaining = Math.max(0, state.remaining - (ranMs / MS) * rate);
    } else {
      const keptMs = this.checkpointMs > 0 ? Math.floor(elapsedMs / this.checkpointMs) * this.checkpointMs : 0;
      state.remaining = Math.max(0, state.remaining - (keptMs / MS) * rate);
      state.outcome.lostAcceleratorSeconds += ((elapsedMs - keptMs) / MS) * accelerators;
    }
    if (move) state.outcome.moves += 1;
    else {
      state.outcome.preemptions += 1;
      state.lastPreemptedAt = this.now + this.input.epochMs;
    }
    const checkpointSeconds = this.input.config.checkpointIntervalSeconds;
    state.spec = toPendingSpec(state.job, state.spec.submittedAt, state.remaining, checkpointSeconds, this.graceSeconds, this.now + graceMs + this.input.epochMs);
    if (move || graceMs === 0) this.pending.set(state.spec);
    else this.queue.push({ at: this.now + graceMs, kind: 'arrival', jobId, run: 0 });
    if (!move) this.stats.preemptionTimes.push(this.now / MS);
    return graceMs;
  }

  /**
   * The job starts on the decided flavor and nodes; its completion is at now + remaining work ÷ the flavor's rate,
   * after `delayMs` (the grace period of what it replaces) and, for a job that ran before, its restart.
   */
  private admit(decision: CycleResult['admissions'][number], delayMs = 0): void {
    const state = this.states.get(decision.jobId);
    if (state === undefined || !this.pending.has(decision.jobId)) throw new Error(`the core admitted ${decision.jobId}, which is not pending`);
    const job = state.job;
    if (decision.replicas !== job.replicas) throw new Error(`the core admitted ${decision.replicas} of ${job.replicas} replicas of rigid gang ${job.id}`);
    const rate = job.rates[decision.flavor];
    if (rate === undefined) throw new Error(`the core admitted ${job.id} on flavor ${decision.flavor}, which it does not accept`);
    this.pending.delete(job.id);
    const restarts = state.outcome.preemptions + state.outcome.moves > 0;
    this.startRun(state, decision.flavor, decision.placement, decision.preempts, 0, delayMs + (restarts ? this.restartMs : 0));
  }

  /**
   * A run of the job starts now on `flavor` (or started `elapsedSeconds` before the simulation did);
   * its completion is at now + remaining work ÷ the flavor's rate.
   */
  private startRun(state: JobState, flavor: string, placement: ReplicaPlacement[], preempts: string[], elapsedSeconds: number, delayMs = 0): void {
    const job = state.job;
    const rate = job.rates[flavor]!;
    const runMs = Math.max(1, Math.ceil((state.remaining / rate) * MS));
    state.run += 1;
    // It holds its accelerators from now and runs from now + delayMs (the grace period of those it replaces).
    state.runStartMs = this.now + delayMs;
    state.outcome.flavor = flavor;
    if (state.outcome.firstStartSeconds === null) state.outcome.firstStartSeconds = (this.now + delayMs) / MS - elapsedSeconds;
    state.running = toRunningJob(
      state.spec,
      flavor,
      placement,
      this.now + this.input.epochMs - elapsedSeconds * MS,
      // On its fastest flavor, as the core expects of a job with speeds (it scales it to this flavor's rate).
      elapsedSeconds === 0 && delayMs === 0 ? state.remaining / bestRate(job) : ((state.remaining / rate + elapsedSeconds + delayMs / MS) * rate) / bestRate(job),
      // Kept for the core so that a victim never preempts its own preemptor back.
      preempts.length > 0 ? preempts : undefined,
      state.lastPreemptedAt,
    );
    this.running.set(state.running);
    this.allocated += job.replicas * job.acceleratorsPerReplica;
    for (const p of placement) this.heldOn.set(p.node, (this.heldOn.get(p.node) ?? 0) + p.accelerators);
    this.queue.push({ at: this.now + delayMs + runMs, kind: 'completion', jobId: job.id, run: state.run });
  }

  /** Every job's outcome, the unfinished ones with the last reason the core gave, and the run's figures. */
  result(): SimResult & { rejected: Rejected[] } {
    const reasons = new Map(this.lastPending.map((p) => [p.jobId, `${p.code}: ${p.message}`]));
    const unfinished: Unfinished[] = [];
    for (const state of this.states.values()) {
      if (state.outcome.endSeconds === null) {
        unfinished.push({
          id: state.job.id,
          line: state.job.line,
          team: state.job.team,
          reason: reasons.get(state.job.id) ?? 'never admitted',
        });
      }
    }
    const s = this.stats;
    return {
      jobs: Array.from(this.states.values(), (st) => st.outcome),
      unfinished,
      rejected: this.rejected,
      allocation: s.allocation,
      preemptionTimes: s.preemptionTimes,
      capacity: this.capacity,
      capacityByFlavor: this.capacityByFlavor,
      endSeconds: this.now / MS,
      cycles: s.cycles,
      coreMillis: s.coreMillis,
      maxPending: s.maxPending,
      slowestCycleMillis: s.slowestCycleMillis,
      slowestCyclePending: s.slowestCyclePending,
      queuedSeconds: s.queuedMs / MS,
      utilizationWhileQueued: s.queuedMs > 0 && this.capacity > 0 ? s.queuedAllocatedMs / (s.queuedMs * this.capacity) : 0,
    };
  }
}
