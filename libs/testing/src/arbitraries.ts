/**
 * fast-check arbitraries for the scheduling core's property tests: random clusters, tenancies, jobs and
 * event sequences. Everything that refers to something else (a job's team, a node to lose, a quota to
 * change) is drawn as a plain index and resolved modulo the current list when the event is applied
 * (see cycle-driver.ts), so values stay independent and shrink well.
 */
import fc from 'fast-check';
import {
  DEFAULT_OPTIONS,
  type ClusterNode,
  type Cohort,
  type Flavor,
  type FlavorSelection,
  type JobKind,
  type Quota,
  type ReclaimPolicy,
  type SchedulerOptions,
  type Team,
  type TopologyLevel,
  type WithinTeamPolicy,
} from '#core';

/** The accelerator catalogue clusters are drawn from (every kind, one TPU with slice shapes). */
export const FLAVOR_CATALOGUE: readonly Flavor[] = [
  { name: 'h100-80gb', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 2, costPerHour: 4, memoryGiB: 80 },
  { name: 'a100-40gb', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 2, memoryGiB: 40 },
  { name: 'trn1', kind: 'aws-trainium', resourceName: 'aws.amazon.com/neuron', relativeSpeed: 1.2, costPerHour: 1.5 },
  { name: 'gaudi2', kind: 'intel-gaudi', resourceName: 'habana.ai/gaudi', relativeSpeed: 1.1, costPerHour: 1.8 },
  { name: 'tpu-v5e', kind: 'google-tpu', resourceName: 'google.com/tpu', relativeSpeed: 1.5, costPerHour: 1.2 },
];

/** TPU slices: slice i has shape TPU_SHAPES[i % length]. */
export const TPU_SHAPES = ['2x2', '2x4'] as const;

export const WITHIN_TEAM_POLICIES: readonly WithinTeamPolicy[] = ['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'];
export const RECLAIM_POLICIES: readonly ReclaimPolicy[] = ['Never', 'LowerPriority', 'Any'];

export interface ClusterShape {
  flavors: Flavor[];
  nodes: ClusterNode[];
}

export interface Tenancy {
  cohorts: Cohort[];
  teams: Team[];
  quotas: Quota[];
}

export interface ArbitraryLimits {
  maxNodes: number;
  maxTeams: number;
  maxCohorts: number;
}

export const DEFAULT_LIMITS: ArbitraryLimits = { maxNodes: 16, maxTeams: 5, maxCohorts: 2 };

const nodeDraw = fc.record({
  flavor: fc.nat(),
  size: fc.constantFrom(4, 8),
  cpuMillis: fc.constantFrom(16_000, 64_000, 192_000),
  memoryMiB: fc.constantFrom(65_536, 524_288, 2_097_152),
  zone: fc.integer({ min: 0, max: 2 }),
  block: fc.integer({ min: 0, max: 3 }),
  domain: fc.option(fc.integer({ min: 0, max: 5 }), { freq: 6 }),
  slice: fc.integer({ min: 0, max: 3 }),
  cordoned: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  external: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 5 }),
});

/** A cluster: 1–4 flavors of the catalogue (TPU often present) and nodes with topology labels. */
export function arbCluster(limits: ArbitraryLimits = DEFAULT_LIMITS): fc.Arbitrary<ClusterShape> {
  return fc
    .record({
      flavors: fc.subarray([...FLAVOR_CATALOGUE], { minLength: 1, maxLength: 4 }),
      nodes: fc.array(nodeDraw, { minLength: 2, maxLength: limits.maxNodes }),
    })
    .map(({ flavors, nodes }) => ({
      flavors,
      nodes: nodes.map((d, i): ClusterNode => {
        const flavor = flavors[d.flavor % flavors.length]!;
        const tpu = flavor.kind === 'google-tpu';
        const accelerators = tpu ? 4 : d.size;
        const node: ClusterNode = {
          name: `node-${i}`,
          flavor: flavor.name,
          accelerators,
          cpuMillis: d.cpuMillis,
          memoryMiB: d.memoryMiB,
          topology: tpu
            ? { zone: `z${d.zone}`, block: `b${d.block}`, domain: `slice-${d.slice}`, tpuShape: TPU_SHAPES[d.slice % TPU_SHAPES.length]! }
            : { zone: `z${d.zone}`, block: `b${d.zone}-${d.block}`, ...(d.domain === null ? {} : { domain: `nvl-${d.zone}-${d.domain}` }) },
          schedulable: !d.cordoned,
        };
        if (d.external !== null) {
          node.external = { accelerators: Math.min(d.external, accelerators), cpuMillis: 1000 * d.external, memoryMiB: 4096 * d.external };
        }
        return node;
      }),
    }));
}

const quotaDraw = fc.record({
  present: fc.integer({ min: 0, max: 9 }).map((n) => n < 9),
  nominal: fc.constantFrom(0, 4, 8, 16, 32, 64),
  borrowingLimit: fc.option(fc.constantFrom(0, 4, 8, 16, 32), { freq: 2 }),
  lendingLimit: fc.option(fc.constantFrom(0, 2, 4, 8, 16), { freq: 2 }),
  cpuMillisLimit: fc.option(fc.constantFrom(0, 8000, 64_000, 256_000), { freq: 4 }),
  memoryMiBLimit: fc.option(fc.constantFrom(0, 65_536, 1_048_576), { freq: 4 }),
});

const quotaChangeDraw = quotaDraw;

/** Cohorts, teams (every policy value) and per-team × flavor quotas (null and finite limits). */
export function arbTenancy(flavors: readonly Flavor[], limits: ArbitraryLimits = DEFAULT_LIMITS): fc.Arbitrary<Tenancy> {
  const team = fc.record({
    cohort: fc.option(fc.nat({ max: Math.max(0, limits.maxCohorts - 1) }), { freq: 4 }),
    weight: fc.integer({ min: 1, max: 3 }),
    withinTeam: fc.constantFrom(...WITHIN_TEAM_POLICIES),
    reclaim: fc.constantFrom(...RECLAIM_POLICIES),
    quotas: fc.array(quotaDraw, { minLength: flavors.length, maxLength: flavors.length }),
  });
  return fc.array(team, { minLength: 1, maxLength: limits.maxTeams }).map((draws) => {
    const teams: Team[] = draws.map((d, i) => ({
      name: `team-${i}`,
      cohort: d.cohort === null ? null : `cohort-${d.cohort}`,
      fairShareWeight: d.weight,
      preemption: { withinTeam: d.withinTeam, reclaimWithinCohort: d.reclaim },
    }));
    const cohortNames = [...new Set(teams.flatMap((t) => (t.cohort === null ? [] : [t.cohort])))].sort();
    const quotas: Quota[] = [];
    draws.forEach((d, i) =>
      d.quotas.forEach((q, f) => {
        if (q.present) {
          const { cpuMillisLimit, memoryMiBLimit } = q;
          quotas.push({ team: `team-${i}`, flavor: flavors[f]!.name, nominal: q.nominal, borrowingLimit: q.borrowingLimit, lendingLimit: q.lendingLimit, cpuMillisLimit, memoryMiBLimit });
        }
      }),
    );
    return { cohorts: cohortNames.map((name) => ({ name })), teams, quotas };
  });
}

/** Scheduler options across every switch (preemption on/off, min runtime, backfill, depth, per-team limit, queue ordering). */
export function arbOptions(): fc.Arbitrary<SchedulerOptions> {
  return fc
    .record({
      preemption: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
      minRuntimeBeforePreemptionSeconds: fc.constantFrom(0, 0, 60, 600),
      backfill: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
      reservationDepth: fc.integer({ min: 0, max: 4 }),
      maxAdmissionsPerTeamPerCycle: fc.option(fc.integer({ min: 1, max: 2 }), { freq: 4 }),
      flavorSelectionOverride: fc.option(fc.constantFrom<FlavorSelection | 'random'>('preference', 'fastest', 'random'), { freq: 4 }),
      seed: fc.nat(),
      ordering: fc.constantFrom<'fifo' | 'shortest-first' | undefined>(undefined, 'fifo', 'shortest-first'),
    })
    .map(({ flavorSelectionOverride, ordering, ...o }) => ({
      ...DEFAULT_OPTIONS,
      ...o,
      ...(flavorSelectionOverride === null ? {} : { flavorSelectionOverride }),
      ...(ordering === undefined ? {} : { ordering }),
    }));
}

/** A job as drawn: references are indices resolved against the world when submitted. */
export interface JobDraw {
  team: number;
  kind: JobKind;
  priority: number;
  preemptible: boolean;
  replicas: number;
  /** minReplicas = replicas − elastic (at least 1). */
  elastic: number;
  acceleratorsPerReplica: number;
  cpuMillisPerReplica: number;
  memoryMiBPerReplica: number;
  /** Indices into the world's flavors; −1 = a flavor that does not exist (INVALID path). */
  flavors: number[];
  flavorSelection: FlavorSelection;
  speedBoost: number | null;
  topology: TopologyLevel;
  /** Ask for a TPU slice shape (only when a TPU flavor is among the accepted ones). */
  tpuShape: number | null;
  expectedRuntimeSeconds: number | null;
}

export function arbJobDraw(): fc.Arbitrary<JobDraw> {
  return fc.record({
    team: fc.nat(),
    kind: fc.constantFrom<JobKind>('training', 'eval', 'batch-inference', 'serving'),
    priority: fc.constantFrom(0, 10, 10, 100, 1000),
    preemptible: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
    replicas: fc.integer({ min: 1, max: 4 }),
    elastic: fc.integer({ min: 0, max: 3 }).map((n) => (n === 3 ? 2 : 0)),
    acceleratorsPerReplica: fc.constantFrom(1, 1, 2, 2, 4, 4, 8),
    cpuMillisPerReplica: fc.constantFrom(1000, 8000, 32_000),
    memoryMiBPerReplica: fc.constantFrom(4096, 65_536, 262_144),
    flavors: fc.array(fc.oneof({ weight: 40, arbitrary: fc.nat({ max: 4 }) }, { weight: 1, arbitrary: fc.constant(-1) }), { minLength: 1, maxLength: 3 }),
    flavorSelection: fc.constantFrom<FlavorSelection>('preference', 'fastest'),
    speedBoost: fc.option(fc.integer({ min: 1, max: 3 }), { freq: 4 }),
    topology: fc.constantFrom<TopologyLevel>('none', 'none', 'zone', 'block', 'domain'),
    tpuShape: fc.option(fc.nat({ max: TPU_SHAPES.length - 1 }), { freq: 2 }),
    expectedRuntimeSeconds: fc.option(fc.constantFrom(60, 600, 3600, 7200), { freq: 5 }),
  });
}

/** What happens to the cluster between two cycles. */
export type ClusterEvent =
  | { type: 'submit'; jobs: JobDraw[] }
  | { type: 'finish'; pick: number }
  | { type: 'cancel'; pick: number }
  | { type: 'quota'; pick: number; quota: { present: boolean; nominal: number; borrowingLimit: number | null; lendingLimit: number | null } }
  | { type: 'nodeLoss'; pick: number }
  | { type: 'cordon'; pick: number; schedulable: boolean }
  | { type: 'advance'; seconds: number };

export function arbEvent(): fc.Arbitrary<ClusterEvent> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant('submit' as const), jobs: fc.array(arbJobDraw(), { minLength: 1, maxLength: 8 }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('finish' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('cancel' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('quota' as const), pick: fc.nat(), quota: quotaChangeDraw }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('nodeLoss' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('cordon' as const), pick: fc.nat(), schedulable: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('advance' as const), seconds: fc.constantFrom(1, 30, 60, 300, 3600) }) },
  );
}

/** A starting world and the events that drive it, one cycle after each event. */
export interface Scenario {
  cluster: ClusterShape;
  tenancy: Tenancy;
  options: SchedulerOptions;
  events: ClusterEvent[];
}

export function arbScenario(limits: ArbitraryLimits = DEFAULT_LIMITS, maxEvents = 12): fc.Arbitrary<Scenario> {
  return arbCluster(limits).chain((cluster) =>
    fc.record({
      cluster: fc.constant(cluster),
      tenancy: arbTenancy(cluster.flavors, limits),
      options: arbOptions(),
      events: fc.array(arbEvent(), { minLength: 1, maxLength: maxEvents }),
    }),
  );
}

/** A deterministic permutation of `items` from `seed` (Fisher–Yates over a small LCG). */
export function shuffleWithSeed<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * A contended world: one or two flavors, every team in one cohort with quotas that split the fleet
 * (nominal ≈ capacity / teams, borrowing and lending limits drawn), preemption on; a first burst of
 * priority-0 preemptible jobs of team-0 fills the fleet (so team-0 borrows), then submit-heavy events
 * with mixed priorities follow.
 * Here the queue outgrows the fleet, so within-team preemption and reclaim happen.
 */
export function arbContendedScenario(maxEvents = 16): fc.Arbitrary<Scenario> {
  const smallJob = arbJobDraw().map((j) => ({
    ...j,
    replicas: Math.min(j.replicas, 2),
    acceleratorsPerReplica: Math.min(j.acceleratorsPerReplica, 4),
    flavors: [Math.max(0, j.flavors[0]!)],
  }));
  return arbCluster({ maxNodes: 10, maxTeams: 4, maxCohorts: 1 })
    .map((c) => {
      const flavors = c.flavors.slice(0, 2);
      const names = new Set(flavors.map((f) => f.name));
      return { flavors, nodes: c.nodes.filter((n) => names.has(n.flavor)) };
    })
    .filter((c) => c.nodes.length >= 2)
    .chain((cluster) =>
      fc.record({
        cluster: fc.constant(cluster),
        tenancy: arbTenancy(cluster.flavors, { maxNodes: 10, maxTeams: 4, maxCohorts: 1 }).map((t) => {
          const capacity = new Map<string, number>();
          for (const n of cluster.nodes) capacity.set(n.flavor, (capacity.get(n.flavor) ?? 0) + n.accelerators);
          const share = (f: string): number => Math.floor((capacity.get(f) ?? 0) / t.teams.length);
          const teams = t.teams.map((team, i) => (i === 0 || team.cohort !== null ? { ...team, cohort: 'cohort-0' } : team));
          const quotas = teams.flatMap((team) =>
            cluster.flavors.map((f, k) => {
              const drawn = t.quotas.find((q) => q.team === team.name && q.flavor === f.name);
              return {
                team: team.name,
                flavor: f.name,
                nominal: share(f.name),
                borrowingLimit: drawn?.borrowingLimit ?? null,
                lendingLimit: k === 0 ? null : (drawn?.lendingLimit ?? null),
              };
            }),
          );
          return { cohorts: [{ name: 'cohort-0' }], teams, quotas };
        }),
        options: arbOptions().map((o) => ({ ...o, preemption: true, maxAdmissionsPerTeamPerCycle: null })),
        // First a burst of team-0's low-priority preemptible work that fills the fleet, then mixed arrivals.
        events: fc
          .tuple(
            fc.array(smallJob.map((j) => ({ ...j, team: 0, priority: 0, preemptible: true })), { minLength: 4, maxLength: 16 }),
            fc.array(
              fc.oneof(
                { weight: 6, arbitrary: fc.record({ type: fc.constant('submit' as const), jobs: fc.array(smallJob, { minLength: 1, maxLength: 6 }) }) },
                { weight: 1, arbitrary: arbEvent() },
              ),
              { minLength: 1, maxLength: maxEvents },
            ),
          )
          .map(([fill, rest]): ClusterEvent[] => [{ type: 'submit', jobs: fill }, ...rest]),
      }),
    );
}

/**
 * Ways a pending job can arrive malformed (from a bad API client or a broken row): each patch alone makes
 * the job invalid. `duplicate` means "give it the id of another pending job".
 */
export type JobCorruption = { patch: Record<string, unknown> } | { duplicate: true };

export const JOB_CORRUPTIONS: readonly JobCorruption[] = [
  { patch: { replicas: 0 } },
  { patch: { replicas: -1 } },
  { patch: { replicas: 1.5 } },
  { patch: { replicas: Number.NaN } },
  { patch: { minReplicas: 0 } },
  { patch: { minReplicas: 99 } },
  { patch: { acceleratorsPerReplica: -1 } },
  { patch: { acceleratorsPerReplica: 0.5 } },
  { patch: { acceleratorsPerReplica: Number.NaN } },
  { patch: { cpuMillisPerReplica: -1 } },
  { patch: { memoryMiBPerReplica: Number.POSITIVE_INFINITY } },
  { patch: { flavors: [] } },
  { patch: { team: 'no-such-team' } },
  { patch: { priority: Number.NaN } },
  { patch: { priority: Number.POSITIVE_INFINITY } },
  { patch: { submittedAt: Number.NaN } },
  { patch: { expectedRuntimeSeconds: -5 } },
  { patch: { expectedRuntimeSeconds: Number.NaN } },
  { patch: { topology: { level: 'rack' } } },
  { duplicate: true },
];

/** Up to `max` corruptions, each aimed at a pending job by index (resolved modulo the queue). */
export function arbCorruptions(max = 4): fc.Arbitrary<{ pick: number; corruption: JobCorruption }[]> {
  return fc.array(fc.record({ pick: fc.nat(), corruption: fc.constantFrom(...JOB_CORRUPTIONS) }), { minLength: 1, maxLength: max });
}
