/**
 * Fluent builders for scheduling-core tests, e.g.
 *   makeNode('n1').flavor('h100-80gb').accelerators(8).zone('z1').block('b1')
 *   makeJob('train-a').team('vision').replicas(4).accelerators(8).priority(10)
 *   makeTeam('vision').cohort('research')
 *   makeQuota('vision', 'h100-80gb').nominal(32).borrowingLimit(16)
 *   snapshot().nodes(...).teams(...).quotas(...).pending(...).build()
 * Every builder has sensible defaults, so a test states only what it is about. Builders are
 * immutable-friendly: `build()` returns a fresh object each time.
 */
import {
  DEFAULT_OPTIONS,
  type ClusterNode,
  type Cohort,
  type Flavor,
  type FlavorKind,
  type FlavorSelection,
  type JobKind,
  type JobRole,
  type PendingJob,
  type Quota,
  type ReclaimPolicy,
  type ReplicaPlacement,
  type RunningJob,
  type SchedulerOptions,
  type Snapshot,
  type Team,
  type TopologyLevel,
  type WithinTeamPolicy,
  envelopeOf,
} from '#core';

/** The default "now" of built snapshots: 2026-01-01T12:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1, 12);
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DEFAULT_FLAVOR = 'h100-80gb';

export class FlavorBuilder {
  private f: Flavor;
  constructor(name: string) {
    this.f = { name, kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 };
  }
  kind(kind: FlavorKind): this {
    const resource: Record<FlavorKind, string> = {
      'nvidia-gpu': 'nvidia.com/gpu',
      'aws-trainium': 'aws.amazon.com/neuron',
      'intel-gaudi': 'habana.ai/gaudi',
      'google-tpu': 'google.com/tpu',
    };
    this.f = { ...this.f, kind, resourceName: resource[kind] };
    return this;
  }
  speed(relativeSpeed: number): this {
    this.f = { ...this.f, relativeSpeed };
    return this;
  }
  cost(costPerHour: number): this {
    this.f = { ...this.f, costPerHour };
    return this;
  }
  build(): Flavor {
    return { ...this.f };
  }
}

export class NodeBuilder {
  private n: ClusterNode;
  constructor(name: string) {
    this.n = {
      name,
      flavor: DEFAULT_FLAVOR,
      accelerators: 8,
      cpuMillis: 96_000,
      memoryMiB: 1_000_000,
      topology: {},
      schedulable: true,
    };
  }
  flavor(flavor: string): this {
    this.n = { ...this.n, flavor };
    return this;
  }
  accelerators(n: number): this {
    this.n = { ...this.n, accelerators: n };
    return this;
  }
  cpu(millis: number): this {
    this.n = { ...this.n, cpuMillis: millis };
    return this;
  }
  memory(mib: number): this {
    this.n = { ...this.n, memoryMiB: mib };
    return this;
  }
  zone(zone: string): this {
    this.n = { ...this.n, topology: { ...this.n.topology, zone } };
    return this;
  }
  block(block: string): this {
    this.n = { ...this.n, topology: { ...this.n.topology, block } };
    return this;
  }
  domain(domain: string): this {
    this.n = { ...this.n, topology: { ...this.n.topology, domain } };
    return this;
  }
  tpuShape(tpuShape: string): this {
    this.n = { ...this.n, topology: { ...this.n.topology, tpuShape } };
    return this;
  }
  labels(labels: Record<string, string>): this {
    this.n = { ...this.n, labels: { ...this.n.labels, ...labels } };
    return this;
  }
  unschedulable(): this {
    this.n = { ...this.n, schedulable: false };
    return this;
  }
  external(accelerators: number, cpuMillis = 0, memoryMiB = 0): this {
    this.n = { ...this.n, external: { accelerators, cpuMillis, memoryMiB } };
    return this;
  }
  build(): ClusterNode {
    return { ...this.n, topology: { ...this.n.topology } };
  }
}

export class TeamBuilder {
  private t: Team;
  constructor(name: string) {
    this.t = { name, cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' } };
  }
  cohort(cohort: string | null): this {
    this.t = { ...this.t, cohort };
    return this;
  }
  weight(fairShareWeight: number): this {
    this.t = { ...this.t, fairShareWeight };
    return this;
  }
  withinTeam(withinTeam: WithinTeamPolicy): this {
    this.t = { ...this.t, preemption: { ...this.t.preemption, withinTeam } };
    return this;
  }
  reclaim(reclaimWithinCohort: ReclaimPolicy): this {
    this.t = { ...this.t, preemption: { ...this.t.preemption, reclaimWithinCohort } };
    return this;
  }
  build(): Team {
    return { ...this.t, preemption: { ...this.t.preemption } };
  }
}

export class QuotaBuilder {
  private q: Quota;
  constructor(team: string, flavor: string) {
    this.q = { team, flavor, nominal: 0, borrowingLimit: null, lendingLimit: null };
  }
  nominal(n: number): this {
    this.q = { ...this.q, nominal: n };
    return this;
  }
  borrowingLimit(n: number | null): this {
    this.q = { ...this.q, borrowingLimit: n };
    return this;
  }
  lendingLimit(n: number | null): this {
    this.q = { ...this.q, lendingLimit: n };
    return this;
  }
  cpuLimit(millis: number | null): this {
    this.q = { ...this.q, cpuMillisLimit: millis };
    return this;
  }
  memoryLimit(mib: number | null): this {
    this.q = { ...this.q, memoryMiBLimit: mib };
    return this;
  }
  build(): Quota {
    return { ...this.q };
  }
}

export class JobBuilder {
  private j: PendingJob;
  private runFlavor: string | undefined;
  private runNodes: string[] = [];
  private admitted = T0 - 10 * MINUTE;
  private lastCheckpoint: number | undefined;
  private lastPreempted: number | undefined;
  constructor(id: string) {
    this.j = {
      id,
      name: id,
      team: 'vision',
      kind: 'training',
      priority: 0,
      preemptible: true,
      replicas: 1,
      minReplicas: 1,
      acceleratorsPerReplica: 1,
      cpuMillisPerReplica: 1000,
      memoryMiBPerReplica: 1024,
      flavors: [DEFAULT_FLAVOR],
      flavorSelection: 'preference',
      topology: { level: 'none' },
      expectedRuntimeSeconds: null,
      submittedAt: T0 - MINUTE,
    };
  }
  private set(patch: Partial<PendingJob>): this {
    this.j = { ...this.j, ...patch };
    return this;
  }
  name(name: string): this {
    return this.set({ name });
  }
  team(team: string): this {
    return this.set({ team });
  }
  kind(kind: JobKind): this {
    return this.set({ kind });
  }
  priority(priority: number): this {
    return this.set({ priority });
  }
  nonPreemptible(): this {
    return this.set({ preemptible: false });
  }
  /** Rigid gang of n replicas (also sets minReplicas = n; call minReplicas after for elastic). */
  replicas(n: number): this {
    return this.set({ replicas: n, minReplicas: n });
  }
  minReplicas(n: number): this {
    return this.set({ minReplicas: n });
  }
  /**
   * A multi-role gang: `[name, replicas, accelerators, cpuMillis, memoryMiB, minReplicas?]` per role; the
   * per-replica fields become the roles' envelope (roles.ts `envelopeOf`).
   */
  roles(...roles: [name: string, replicas: number, accelerators: number, cpuMillis: number, memoryMiB: number, minReplicas?: number][]): this {
    const list: JobRole[] = roles.map(([name, replicas, a, c, m, min]) => ({
      name,
      replicas,
      minReplicas: min ?? replicas,
      acceleratorsPerReplica: a,
      cpuMillisPerReplica: c,
      memoryMiBPerReplica: m,
    }));
    return this.set({ roles: list, ...envelopeOf(list) });
  }
  accelerators(n: number): this {
    return this.set({ acceleratorsPerReplica: n });
  }
  cpu(millis: number): this {
    return this.set({ cpuMillisPerReplica: millis });
  }
  memory(mib: number): this {
    return this.set({ memoryMiBPerReplica: mib });
  }
  flavors(...flavors: string[]): this {
    return this.set({ flavors });
  }
  selection(flavorSelection: FlavorSelection): this {
    return this.set({ flavorSelection });
  }
  speeds(speeds: Record<string, number>): this {
    return this.set({ speeds });
  }
  topology(level: TopologyLevel, tpuShape?: string): this {
    const { nodeSelector } = this.j.topology;
    return this.set({ topology: { level, ...(tpuShape === undefined ? {} : { tpuShape }), ...(nodeSelector === undefined ? {} : { nodeSelector }) } });
  }
  /** Only nodes with these labels (the pod template's nodeSelector). */
  nodeSelector(nodeSelector: Record<string, string>): this {
    return this.set({ topology: { ...this.j.topology, nodeSelector } });
  }
  /** Expected runtime in seconds (null = unknown). */
  runtime(seconds: number | null): this {
    return this.set({ expectedRuntimeSeconds: seconds });
  }
  submittedAt(ms: number): this {
    return this.set({ submittedAt: ms });
  }
  /** Makes it a running job: one replica per listed node (repeat a node for several replicas). */
  runsOn(...nodes: string[]): this {
    this.runNodes = nodes;
    return this;
  }
  onFlavor(flavor: string): this {
    this.runFlavor = flavor;
    return this;
  }
  admittedAt(ms: number): this {
    this.admitted = ms;
    return this;
  }
  /** Checkpoints every `intervalSeconds`, and within `gracePeriodSeconds` when evicted. */
  checkpoint(intervalSeconds: number, gracePeriodSeconds = 0): this {
    return this.set({ checkpoint: { intervalSeconds, gracePeriodSeconds } });
  }
  /** Running: its executor reported a checkpoint at `ms`. */
  checkpointedAt(ms: number): this {
    this.lastCheckpoint = ms;
    return this;
  }
  /** Running: it was preempted (and requeued) at `ms` before this run. */
  preemptedAt(ms: number): this {
    this.lastPreempted = ms;
    return this;
  }
  build(): PendingJob {
    return { ...this.j, flavors: [...this.j.flavors], topology: { ...this.j.topology } };
  }
  buildRunning(): RunningJob {
    const j = this.build();
    // A multi-role gang's replicas go role after role onto the listed nodes, each with its role's shape.
    const shapes = j.roles !== undefined && j.roles.length > 1 ? j.roles.flatMap((r) => Array.from({ length: r.replicas }, () => r)) : undefined;
    const placement: ReplicaPlacement[] = this.runNodes.map((node, replica) => {
      const r = shapes?.[replica];
      return {
        replica,
        ...(r === undefined ? {} : { role: r.name }),
        node,
        accelerators: r?.acceleratorsPerReplica ?? j.acceleratorsPerReplica,
        cpuMillis: r?.cpuMillisPerReplica ?? j.cpuMillisPerReplica,
        memoryMiB: r?.memoryMiBPerReplica ?? j.memoryMiBPerReplica,
      };
    });
    const running: RunningJob = { ...j, flavor: this.runFlavor ?? j.flavors[0]!, placement, admittedAt: this.admitted };
    if (this.lastCheckpoint !== undefined) running.lastCheckpointAt = this.lastCheckpoint;
    if (this.lastPreempted !== undefined) running.lastPreemptedAt = this.lastPreempted;
    return running;
  }
}

export const makeFlavor = (name: string): FlavorBuilder => new FlavorBuilder(name);
export const makeNode = (name: string): NodeBuilder => new NodeBuilder(name);
export const makeTeam = (name: string): TeamBuilder => new TeamBuilder(name);
export const makeQuota = (team: string, flavor: string): QuotaBuilder => new QuotaBuilder(team, flavor);
export const makeJob = (id: string): JobBuilder => new JobBuilder(id);

/** n nodes named `${prefix}-0..n-1`, configured by `configure` (e.g. flavor, zone). */
export function makeNodes(prefix: string, n: number, configure: (b: NodeBuilder, i: number) => NodeBuilder = (b) => b): NodeBuilder[] {
  return Array.from({ length: n }, (_, i) => configure(makeNode(`${prefix}-${i}`), i));
}

type Buildable<T> = T | { build(): T };
const built = <T>(x: Buildable<T>): T =>
  typeof x === 'object' && x !== null && 'build' in x && typeof x.build === 'function' ? x.build() : (x as T);

export class SnapshotBuilder {
  private s: {
    now: number;
    flavors: Flavor[] | undefined;
    nodes: ClusterNode[];
    cohorts: Cohort[] | undefined;
    teams: Team[];
    quotas: Quota[];
    running: RunningJob[];
    pending: PendingJob[];
    options: SchedulerOptions;
  } = { now: T0, flavors: undefined, nodes: [], cohorts: undefined, teams: [], quotas: [], running: [], pending: [], options: { ...DEFAULT_OPTIONS } };

  now(ms: number): this {
    this.s.now = ms;
    return this;
  }
  /** Flavors; when never called, every flavor a node, quota or job names is created with defaults. */
  flavors(...f: Buildable<Flavor>[]): this {
    this.s.flavors = [...(this.s.flavors ?? []), ...f.map(built)];
    return this;
  }
  nodes(...n: Buildable<ClusterNode>[]): this {
    this.s.nodes.push(...n.map(built));
    return this;
  }
  /** Cohorts; when never called, every cohort a team names is created. */
  cohorts(...c: string[]): this {
    this.s.cohorts = [...(this.s.cohorts ?? []), ...c.map((name) => ({ name }))];
    return this;
  }
  teams(...t: Buildable<Team>[]): this {
    this.s.teams.push(...t.map(built));
    return this;
  }
  quotas(...q: Buildable<Quota>[]): this {
    this.s.quotas.push(...q.map(built));
    return this;
  }
  /** Running jobs: JobBuilders (their `buildRunning()` is used) or RunningJob objects. */
  running(...r: (JobBuilder | RunningJob)[]): this {
    this.s.running.push(...r.map((x) => (x instanceof JobBuilder ? x.buildRunning() : x)));
    return this;
  }
  pending(...p: Buildable<PendingJob>[]): this {
    this.s.pending.push(...p.map(built));
    return this;
  }
  options(o: Partial<SchedulerOptions>): this {
    this.s.options = { ...this.s.options, ...o };
    return this;
  }
  build(): Snapshot {
    const teams = [...this.s.teams];
    const known = new Set(teams.map((t) => t.name));
    // Teams referenced only by quotas or jobs get default settings.
    for (const name of [...this.s.quotas.map((q) => q.team), ...this.s.pending.map((j) => j.team), ...this.s.running.map((j) => j.team)]) {
      if (!known.has(name)) {
        known.add(name);
        teams.push(makeTeam(name).build());
      }
    }
    const flavorNames = new Set<string>([
      ...this.s.nodes.map((n) => n.flavor),
      ...this.s.quotas.map((q) => q.flavor),
      ...this.s.pending.flatMap((j) => j.flavors),
      ...this.s.running.map((j) => j.flavor),
    ]);
    const flavors = this.s.flavors ?? [...flavorNames].sort().map((f) => makeFlavor(f).build());
    const cohorts =
      this.s.cohorts ?? [...new Set(teams.map((t) => t.cohort).filter((c): c is string => c !== null))].sort().map((name) => ({ name }));
    return {
      now: this.s.now,
      flavors: flavors.map((f) => ({ ...f })),
      nodes: this.s.nodes.map((n) => ({ ...n })),
      cohorts,
      teams,
      quotas: [...this.s.quotas],
      running: [...this.s.running],
      pending: [...this.s.pending],
      options: { ...this.s.options },
    };
  }
}

export const snapshot = (): SnapshotBuilder => new SnapshotBuilder();
