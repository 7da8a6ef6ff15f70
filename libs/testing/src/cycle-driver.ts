/**
 * Drives a world through events and cycles the way the scheduler service would, without I/O:
 * - a cycle's admissions become running jobs admitted at `now` (keeping the ids they preempted in
 *   `preempted`, as the app does); its victims go back to pending with their original `submittedAt`
 *   (so they keep their place) and `queuedAt = now`;
 * - events (arbitraries.ts) submit, finish, cancel, change quotas, lose or cordon nodes, advance time.
 * Every function returns a new Snapshot and never mutates its input.
 */
import type { CycleResult, PendingJob, RunningJob, Snapshot } from '#core';
import { TPU_SHAPES, type ClusterEvent, type JobDraw, type Scenario } from './arbitraries.js';

/** Epoch ms at which generated worlds start (a fixed instant, so runs are reproducible). */
export const WORLD_START = Date.UTC(2026, 0, 1);

/** Flavor name used for jobs drawn with flavor index −1: it exists nowhere (the INVALID path). */
export const MISSING_FLAVOR = 'no-such-flavor';

export function initialSnapshot(scenario: Scenario, now = WORLD_START): Snapshot {
  return {
    now,
    flavors: scenario.cluster.flavors,
    nodes: scenario.cluster.nodes,
    cohorts: scenario.tenancy.cohorts,
    teams: scenario.tenancy.teams,
    quotas: scenario.tenancy.quotas,
    running: [],
    pending: [],
    options: scenario.options,
  };
}

/** Turns a drawn job into a pending job of `snapshot`'s world, submitted at `snapshot.now`. */
export function resolveJob(draw: JobDraw, snapshot: Snapshot, id: string): PendingJob {
  const team = snapshot.teams[draw.team % snapshot.teams.length]!;
  const names = draw.flavors.map((f) => (f < 0 ? MISSING_FLAVOR : snapshot.flavors[f % snapshot.flavors.length]!.name));
  const flavors = [...new Set(names)];
  const allTpu = flavors.every((f) => snapshot.flavors.find((x) => x.name === f)?.kind === 'google-tpu');
  const topology =
    draw.tpuShape !== null && allTpu ? { level: 'domain' as const, tpuShape: TPU_SHAPES[draw.tpuShape]! } : { level: draw.topology };
  const job: PendingJob = {
    id,
    name: id,
    team: team.name,
    kind: draw.kind,
    priority: draw.priority,
    preemptible: draw.preemptible,
    replicas: draw.replicas,
    minReplicas: Math.max(1, draw.replicas - draw.elastic),
    acceleratorsPerReplica: draw.acceleratorsPerReplica,
    cpuMillisPerReplica: draw.cpuMillisPerReplica,
    memoryMiBPerReplica: draw.memoryMiBPerReplica,
    flavors,
    flavorSelection: draw.flavorSelection,
    topology,
    expectedRuntimeSeconds: draw.expectedRuntimeSeconds,
    submittedAt: snapshot.now,
    queuedAt: snapshot.now,
  };
  if (draw.speedBoost !== null) job.speeds = { [flavors[0]!]: draw.speedBoost };
  return job;
}

/** A running job back in the queue: original submission time, queued now. */
export function requeue(job: RunningJob, now: number): PendingJob {
  const { flavor: _flavor, placement: _placement, admittedAt: _admittedAt, preempted: _preempted, ...spec } = job;
  return { ...spec, queuedAt: now };
}

/** The world after a cycle's decisions take effect. */
export function applyCycleResult(snapshot: Snapshot, result: CycleResult): Snapshot {
  const victims = new Set(result.preemptions.map((p) => p.victimJobId));
  const admitted = new Map(result.admissions.map((a) => [a.jobId, a]));
  const running: RunningJob[] = [];
  const requeued: PendingJob[] = [];
  for (const job of snapshot.running) {
    if (victims.has(job.id)) requeued.push(requeue(job, snapshot.now));
    else running.push(job);
  }
  const pending: PendingJob[] = [];
  for (const job of snapshot.pending) {
    const a = admitted.get(job.id);
    if (!a) {
      pending.push(job);
      continue;
    }
    const { queuedAt: _queuedAt, ...spec } = job;
    running.push({
      ...spec,
      flavor: a.flavor,
      placement: a.placement.map((p) => ({ ...p })),
      admittedAt: snapshot.now,
      ...(a.preempts.length > 0 ? { preempted: [...a.preempts] } : {}),
    });
  }
  return { ...snapshot, running, pending: [...pending, ...requeued] };
}

/** Jobs whose expected runtime has elapsed finish (honest runtimes); unknown runtimes run on. */
export function finishDueJobs(snapshot: Snapshot): Snapshot {
  const running = snapshot.running.filter(
    (j) => j.expectedRuntimeSeconds === null || j.admittedAt + j.expectedRuntimeSeconds * 1000 > snapshot.now,
  );
  return running.length === snapshot.running.length ? snapshot : { ...snapshot, running };
}

export interface IdSource {
  next: number;
}

export function applyEvent(snapshot: Snapshot, event: ClusterEvent, ids: IdSource): Snapshot {
  switch (event.type) {
    case 'submit': {
      const jobs = event.jobs.map((d) => resolveJob(d, snapshot, `job-${String(ids.next++).padStart(5, '0')}`));
      return { ...snapshot, pending: [...snapshot.pending, ...jobs] };
    }
    case 'finish': {
      if (snapshot.running.length === 0) return snapshot;
      const victim = snapshot.running[event.pick % snapshot.running.length]!;
      return { ...snapshot, running: snapshot.running.filter((j) => j !== victim) };
    }
    case 'cancel': {
      if (snapshot.pending.length > 0) {
        const job = snapshot.pending[event.pick % snapshot.pending.length]!;
        return { ...snapshot, pending: snapshot.pending.filter((j) => j !== job) };
      }
      return applyEvent(snapshot, { type: 'finish', pick: event.pick }, ids);
    }
    case 'quota': {
      const { teams, flavors } = snapshot;
      const team = teams[event.pick % teams.length]!.name;
      const flavor = flavors[Math.floor(event.pick / teams.length) % flavors.length]!.name;
      const others = snapshot.quotas.filter((q) => q.team !== team || q.flavor !== flavor);
      const { present, ...limits } = event.quota;
      return { ...snapshot, quotas: present ? [...others, { team, flavor, ...limits }] : others };
    }
    case 'nodeLoss': {
      if (snapshot.nodes.length <= 1) return snapshot;
      const lost = snapshot.nodes[event.pick % snapshot.nodes.length]!;
      const hit = (j: RunningJob): boolean => j.placement.some((p) => p.node === lost.name);
      return {
        ...snapshot,
        nodes: snapshot.nodes.filter((n) => n !== lost),
        running: snapshot.running.filter((j) => !hit(j)),
        pending: [...snapshot.pending, ...snapshot.running.filter(hit).map((j) => requeue(j, snapshot.now))],
      };
    }
    case 'cordon': {
      const i = event.pick % snapshot.nodes.length;
      return { ...snapshot, nodes: snapshot.nodes.map((n, k) => (k === i ? { ...n, schedulable: event.schedulable } : n)) };
    }
    case 'advance':
      return finishDueJobs({ ...snapshot, now: snapshot.now + event.seconds * 1000 });
  }
}

/**
 * The world after playing a scenario's events with a cycle (`schedule`) after each, no checks; then one
 * more arrival burst, so the final snapshot has work to decide.
 */
export function playedWorld(scenario: Scenario, schedule: (snapshot: Snapshot) => CycleResult): Snapshot {
  const ids: IdSource = { next: 0 };
  let s = initialSnapshot(scenario);
  for (const event of scenario.events) {
    s = applyEvent(s, event, ids);
    s = applyCycleResult(s, schedule(s));
  }
  const burst = scenario.events.find((e) => e.type === 'submit');
  return burst ? applyEvent(s, burst, ids) : s;
}
