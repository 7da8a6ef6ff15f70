/**
 * Seeded generators of benchmark worlds (Snapshots). Same seed, same world.
 *
 * A fleet: `nodes` hosts spread evenly over the chosen flavors (TPU hosts are grouped in slices with a
 * shape), zones → blocks (32 hosts) → NVLink domains (8 hosts). Teams sit in cohorts; each team has a
 * primary flavor (most of its quota) and a smaller secondary one. Running work fills the fleet to the
 * requested level without breaking node capacity or any team's nominal quota; pending gangs follow a
 * realistic mix of sizes, priorities, flavor choices and topology requirements.
 */
import {
  DEFAULT_OPTIONS,
  type ClusterNode,
  type Flavor,
  type PendingJob,
  type Quota,
  type ReclaimPolicy,
  type RunningJob,
  type SchedulerOptions,
  type Snapshot,
  type Team,
  type TopologyRequirement,
  type WithinTeamPolicy,
} from '#core';
import { Rng } from './rng.js';

export const BENCH_NOW = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;

export const BENCH_FLAVORS: readonly Flavor[] = [
  { name: 'h100-80gb', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 2, costPerHour: 4, memoryGiB: 80 },
  { name: 'a100-80gb', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 2, memoryGiB: 80 },
  { name: 'trn1', kind: 'aws-trainium', resourceName: 'aws.amazon.com/neuron', relativeSpeed: 1.2, costPerHour: 1.5 },
  { name: 'tpu-v5p', kind: 'google-tpu', resourceName: 'google.com/tpu', relativeSpeed: 1.6, costPerHour: 2.2 },
];

/** TPU slices of 4 hosts × 8 chips. */
const TPU_SLICE_HOSTS = 4;
const TPU_SLICE_SHAPE = '4x8';

export interface FleetSpec {
  nodes: number;
  acceleratorsPerNode: number;
  flavors: readonly Flavor[];
  /** Fraction of nodes cordoned. */
  cordoned?: number;
}

export function makeFleet(spec: FleetSpec, rng: Rng): ClusterNode[] {
  const nodes: ClusterNode[] = [];
  const perFlavor = Math.ceil(spec.nodes / spec.flavors.length);
  for (let i = 0; i < spec.nodes; i++) {
    const f = Math.floor(i / perFlavor);
    const flavor = spec.flavors[f]!;
    const k = i - f * perFlavor; // index within its flavor
    const zone = `zone-${k % 4}`;
    const inZone = Math.floor(k / 4);
    const tpu = flavor.kind === 'google-tpu';
    const node: ClusterNode = {
      name: `${flavor.name}-${String(k).padStart(5, '0')}`,
      flavor: flavor.name,
      accelerators: spec.acceleratorsPerNode,
      cpuMillis: 192_000,
      memoryMiB: 2_097_152,
      topology: tpu
        ? { zone, block: `${zone}-blk-${Math.floor(inZone / 32)}`, domain: `${zone}-slice-${Math.floor(inZone / TPU_SLICE_HOSTS)}`, tpuShape: TPU_SLICE_SHAPE }
        : { zone, block: `${zone}-blk-${Math.floor(inZone / 32)}`, domain: `${zone}-nvl-${Math.floor(inZone / 8)}` },
      schedulable: !(spec.cordoned && rng.chance(spec.cordoned)),
    };
    if (rng.chance(0.02)) node.external = { accelerators: 1, cpuMillis: 4000, memoryMiB: 16_384 };
    nodes.push(node);
  }
  return nodes;
}

export interface TenancySpec {
  teams: number;
  cohorts: number;
  flavors: readonly Flavor[];
  /** Accelerators of each flavor in the fleet. */
  capacity: ReadonlyMap<string, number>;
  /** Σ nominal of a flavor / its capacity (1 = fully guaranteed). */
  nominalFraction?: number;
}

export interface Tenancy {
  teams: Team[];
  quotas: Quota[];
  cohorts: { name: string }[];
  /** Team → [primary flavor, secondary flavor]. */
  flavorsOf: Map<string, string[]>;
}

const WITHIN: readonly WithinTeamPolicy[] = ['LowerPriority', 'LowerPriority', 'LowerOrNewerEqualPriority', 'Never'];
const RECLAIM: readonly ReclaimPolicy[] = ['Any', 'LowerPriority', 'LowerPriority', 'Never'];

export function makeTenancy(spec: TenancySpec, rng: Rng): Tenancy {
  const teams: Team[] = [];
  const quotas: Quota[] = [];
  const flavorsOf = new Map<string, string[]>();
  const F = spec.flavors.length;
  const fraction = spec.nominalFraction ?? 1;
  const teamsPerFlavor = Math.ceil(spec.teams / F);
  for (let i = 0; i < spec.teams; i++) {
    const name = `team-${String(i).padStart(3, '0')}`;
    teams.push({
      name,
      cohort: spec.cohorts === 0 ? null : `cohort-${i % spec.cohorts}`,
      fairShareWeight: rng.weighted([[1, 6], [2, 3], [4, 1]] as const),
      preemption: { withinTeam: rng.pick(WITHIN), reclaimWithinCohort: rng.pick(RECLAIM) },
    });
    const primary = spec.flavors[i % F]!.name;
    const secondary = spec.flavors[(i + 1) % F]!.name;
    flavorsOf.set(name, F > 1 ? [primary, secondary] : [primary]);
    const cap = spec.capacity.get(primary) ?? 0;
    const nominal = Math.floor((cap * fraction * 0.9) / teamsPerFlavor);
    quotas.push({ team: name, flavor: primary, nominal, borrowingLimit: rng.chance(0.5) ? null : nominal, lendingLimit: rng.chance(0.7) ? null : Math.floor(nominal / 2) });
    if (F > 1) {
      const capS = spec.capacity.get(secondary) ?? 0;
      const nominalS = Math.floor((capS * fraction * 0.1) / teamsPerFlavor);
      quotas.push({ team: name, flavor: secondary, nominal: nominalS, borrowingLimit: rng.chance(0.5) ? null : 4 * nominalS, lendingLimit: null });
    }
  }
  const cohorts = spec.cohorts === 0 ? [] : Array.from({ length: spec.cohorts }, (_, c) => ({ name: `cohort-${c}` }));
  return { teams, quotas, cohorts, flavorsOf };
}

export function capacityOf(nodes: readonly ClusterNode[]): Map<string, number> {
  const cap = new Map<string, number>();
  for (const n of nodes) cap.set(n.flavor, (cap.get(n.flavor) ?? 0) + n.accelerators);
  return cap;
}

interface JobShape {
  replicas: number;
  acceleratorsPerReplica: number;
}

/** Gang size in accelerators → replicas × per-replica (at most a node's worth per replica). */
function shapeOf(total: number, perNode: number): JobShape {
  return total <= perNode ? { replicas: 1, acceleratorsPerReplica: total } : { replicas: Math.ceil(total / perNode), acceleratorsPerReplica: perNode };
}

function baseJob(id: string, team: string, shape: JobShape, rng: Rng): PendingJob {
  return {
    id,
    name: id,
    team,
    kind: rng.weighted([['training', 6], ['eval', 2], ['batch-inference', 2]] as const),
    priority: rng.weighted([[0, 50], [10, 30], [100, 15], [1000, 5]] as const),
    preemptible: rng.chance(0.85),
    replicas: shape.replicas,
    minReplicas: shape.replicas,
    acceleratorsPerReplica: shape.acceleratorsPerReplica,
    cpuMillisPerReplica: 4000 * shape.acceleratorsPerReplica,
    memoryMiBPerReplica: 32_768 * shape.acceleratorsPerReplica,
    flavors: [],
    flavorSelection: rng.chance(0.8) ? 'preference' : 'fastest',
    topology: { level: 'none' },
    expectedRuntimeSeconds: rng.chance(0.9) ? rng.pick([600, 1800, 3600, 4 * 3600, 12 * 3600]) : null,
    submittedAt: BENCH_NOW - rng.int(0, 24 * HOUR),
  };
}

export interface RunningSpec {
  /** How many running jobs to place (fewer if the fleet or quotas fill up first). */
  count: number;
  sizes: readonly (readonly [number, number])[];
  /** Priority of running work; default the usual mix. */
  priority?: number;
  preemptible?: boolean;
  /** Team chooser: default any team with quota room on the node's flavor. */
  teamFor?: (flavor: string, size: number) => string | undefined;
}

/**
 * Places running jobs on random nodes with room (one replica per node, up to a node's worth), charging
 * teams without exceeding their nominal. Returns the jobs and the per-team × flavor usage.
 */
export function makeRunning(nodes: readonly ClusterNode[], tenancy: Tenancy, spec: RunningSpec, rng: Rng): RunningJob[] {
  const free = nodes.map((n) => (n.schedulable ? n.accelerators - (n.external?.accelerators ?? 0) : 0));
  const used = new Map<string, number>();
  const nominal = new Map(tenancy.quotas.map((q) => [`${q.team}/${q.flavor}`, q.nominal]));
  const teamsByFlavor = new Map<string, string[]>();
  for (const q of tenancy.quotas) {
    const list = teamsByFlavor.get(q.flavor) ?? [];
    list.push(q.team);
    teamsByFlavor.set(q.flavor, list);
  }
  const defaultTeam = (flavor: string, size: number): string | undefined => {
    const candidates = teamsByFlavor.get(flavor) ?? [];
    if (candidates.length === 0) return undefined;
    // A random team with room; if that fails, the first with room from a random offset.
    const start = rng.int(0, candidates.length - 1);
    for (let n = 0; n < candidates.length; n++) {
      const t = candidates[(start + n) % candidates.length]!;
      const k = `${t}/${flavor}`;
      if ((used.get(k) ?? 0) + size <= (nominal.get(k) ?? 0)) return t;
    }
    return undefined;
  };
  const teamFor = spec.teamFor ?? defaultTeam;
  const out: RunningJob[] = [];
  /** Per job size, a cursor before which no node has room for that size (keeps the fill linear). */
  const cursor = new Map<number, number>();
  for (let j = 0; j < spec.count; j++) {
    const size = rng.weighted(spec.sizes);
    // A random node with room, else the next one with room from that size's cursor.
    let i = rng.int(0, nodes.length - 1);
    if (free[i]! < size) {
      let c = cursor.get(size) ?? 0;
      while (c < nodes.length && free[c]! < size) c++;
      cursor.set(size, c);
      if (c >= nodes.length) continue;
      i = c;
    }
    const node = nodes[i]!;
    const team = teamFor(node.flavor, size);
    if (team === undefined) continue;
    free[i]! -= size;
    const k = `${team}/${node.flavor}`;
    used.set(k, (used.get(k) ?? 0) + size);
    const job = baseJob(`run-${String(j).padStart(6, '0')}`, team, { replicas: 1, acceleratorsPerReplica: size }, rng);
    if (spec.priority !== undefined) job.priority = spec.priority;
    if (spec.preemptible !== undefined) job.preemptible = spec.preemptible;
    job.flavors = [node.flavor];
    out.push({
      ...job,
      flavor: node.flavor,
      admittedAt: BENCH_NOW - rng.int(0, 6 * HOUR),
      placement: [{ replica: 0, node: node.name, accelerators: size, cpuMillis: job.cpuMillisPerReplica, memoryMiB: job.memoryMiBPerReplica }],
    });
  }
  return out;
}

export interface PendingSpec {
  count: number;
  sizes: readonly (readonly [number, number])[];
  acceleratorsPerNode: number;
  /** Priority of every job; default the usual mix. */
  priority?: number;
  /** Fraction of jobs that also accept their team's secondary flavor. */
  multiFlavor?: number;
  /** Whether large gangs ask for a topology (block / NVLink domain / TPU slice). */
  topology?: boolean;
  teamFor?: (i: number) => string;
  idPrefix?: string;
}

export function makePending(tenancy: Tenancy, flavors: readonly Flavor[], spec: PendingSpec, rng: Rng): PendingJob[] {
  const out: PendingJob[] = [];
  const kindOf = new Map(flavors.map((f) => [f.name, f.kind]));
  for (let i = 0; i < spec.count; i++) {
    const team = spec.teamFor ? spec.teamFor(i) : tenancy.teams[Math.floor(rng.next() ** 2 * tenancy.teams.length)]!.name;
    const [primary, secondary] = tenancy.flavorsOf.get(team)!;
    let size = rng.weighted(spec.sizes);
    const tpu = kindOf.get(primary!) === 'google-tpu';
    let topology: TopologyRequirement = { level: 'none' };
    let accepted = [primary!];
    if (tpu && size >= 16) {
      size = TPU_SLICE_HOSTS * spec.acceleratorsPerNode; // a whole slice
      if (spec.topology !== false) topology = { level: 'domain', tpuShape: TPU_SLICE_SHAPE };
    } else if (!tpu && secondary !== undefined && kindOf.get(secondary) !== 'google-tpu' && rng.chance(spec.multiFlavor ?? 0.3)) {
      accepted = [primary!, secondary];
    }
    if (!tpu && spec.topology !== false && size > spec.acceleratorsPerNode) {
      topology = { level: rng.weighted([['block', 5], ['domain', 2], ['zone', 1], ['none', 2]] as const) };
    }
    const job = baseJob(`${spec.idPrefix ?? 'job'}-${String(i).padStart(6, '0')}`, team, shapeOf(size, spec.acceleratorsPerNode), rng);
    job.flavors = accepted;
    job.topology = topology;
    if (spec.priority !== undefined) job.priority = spec.priority;
    out.push(job);
  }
  return out;
}

export function snapshotOf(parts: {
  nodes: ClusterNode[];
  flavors: readonly Flavor[];
  tenancy: Tenancy;
  running: RunningJob[];
  pending: PendingJob[];
  options?: Partial<SchedulerOptions>;
}): Snapshot {
  return {
    now: BENCH_NOW,
    flavors: [...parts.flavors],
    nodes: parts.nodes,
    cohorts: parts.tenancy.cohorts,
    teams: parts.tenancy.teams,
    quotas: parts.tenancy.quotas,
    running: parts.running,
    pending: parts.pending,
    options: { ...DEFAULT_OPTIONS, ...parts.options },
  };
}
