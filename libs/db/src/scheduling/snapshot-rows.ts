import type {
  ClusterNode,
  Cohort,
  Flavor,
  FlavorKind,
  FlavorSelection,
  JobKind,
  JobRole,
  JobSpec,
  PendingJob,
  Quota,
  ReclaimPolicy,
  ReplicaPlacement,
  RunningJob,
  Team,
  TopologyLevel,
  WithinTeamPolicy,
} from '#core';
import { topologyLabelsOf } from '#core';

/**
 * The snapshot's reads, one SQL text and one row mapper per part, shared by the full read
 * (loadSnapshot) and the scheduler's incremental one (cycle-session.ts). Each `…Sql(where)` takes the
 * condition that narrows it to what changed (`TRUE` for everything); none has parameters, so several go
 * in one message.
 */

export interface FlavorRow {
  name: string;
  kind: FlavorKind;
  resource_name: string;
  relative_speed: number;
  cost_per_hour: number;
  memory_gib: number | null;
  topology_labels: Record<string, string> | null;
}

export const flavorsSql = (where = 'TRUE'): string =>
  `SELECT name, kind::text AS kind, resource_name, relative_speed, cost_per_hour, memory_gib, topology_labels
   FROM flavors WHERE ${where} ORDER BY name`;

export function flavorOf(r: FlavorRow): Flavor {
  const flavor: Flavor = {
    name: r.name,
    kind: r.kind,
    resourceName: r.resource_name,
    relativeSpeed: r.relative_speed,
    costPerHour: r.cost_per_hour,
    topologyLabels: topologyLabelsOf(r.kind, r.topology_labels),
  };
  if (r.memory_gib !== null) flavor.memoryGiB = r.memory_gib;
  return flavor;
}

export interface NodeRow {
  name: string;
  flavor: string;
  accelerators: number;
  cpu_millis: number;
  memory_mib: number;
  zone: string | null;
  block: string | null;
  domain: string | null;
  tpu_shape: string | null;
  schedulable: boolean;
  external_accelerators: number;
  external_cpu_millis: number;
  external_memory_mib: number;
  labels: Record<string, string> | null;
}

export const nodesSql = (where = 'TRUE'): string =>
  `SELECT name, flavor, accelerators, cpu_millis, memory_mib, zone, block, domain, tpu_shape, schedulable,
          external_accelerators, external_cpu_millis, external_memory_mib,
          CASE WHEN labels <> '{}'::jsonb THEN labels END AS labels
   FROM nodes WHERE ${where} ORDER BY name`;

export function nodeOf(r: NodeRow): ClusterNode {
  const node: ClusterNode = {
    name: r.name,
    flavor: r.flavor,
    accelerators: r.accelerators,
    cpuMillis: r.cpu_millis,
    memoryMiB: r.memory_mib,
    topology: {},
    schedulable: r.schedulable,
  };
  if (r.zone !== null) node.topology.zone = r.zone;
  if (r.block !== null) node.topology.block = r.block;
  if (r.domain !== null) node.topology.domain = r.domain;
  if (r.tpu_shape !== null) node.topology.tpuShape = r.tpu_shape;
  if (r.labels !== null) node.labels = r.labels;
  if (r.external_accelerators !== 0 || r.external_cpu_millis !== 0 || r.external_memory_mib !== 0) {
    node.external = {
      accelerators: r.external_accelerators,
      cpuMillis: r.external_cpu_millis,
      memoryMiB: r.external_memory_mib,
    };
  }
  return node;
}

export const cohortsSql = (where = 'TRUE'): string => `SELECT name FROM cohorts WHERE ${where} ORDER BY name`;

export const cohortOf = (r: { name: string }): Cohort => ({ name: r.name });

export interface TeamRow {
  name: string;
  cohort: string | null;
  fair_share_weight: number;
  within_team: WithinTeamPolicy;
  reclaim_within_cohort: ReclaimPolicy;
}

export const teamsSql = (where = 'TRUE'): string =>
  `SELECT name, cohort, fair_share_weight, within_team::text AS within_team,
          reclaim_within_cohort::text AS reclaim_within_cohort
   FROM teams WHERE ${where} ORDER BY name`;

export const teamOf = (r: TeamRow): Team => ({
  name: r.name,
  cohort: r.cohort,
  fairShareWeight: r.fair_share_weight,
  preemption: { withinTeam: r.within_team, reclaimWithinCohort: r.reclaim_within_cohort },
});

export interface QuotaRow {
  team: string;
  flavor: string;
  nominal: number;
  borrowing_limit: number | null;
  lending_limit: number | null;
  cpu_millis_limit: number | null;
  memory_mib_limit: number | null;
}

export const quotasSql = (where = 'TRUE'): string =>
  `SELECT team, flavor, nominal, borrowing_limit, lending_limit, cpu_millis_limit, memory_mib_limit FROM quotas WHERE ${where} ORDER BY team, flavor`;

export const quotaOf = (r: QuotaRow): Quota => ({
  team: r.team,
  flavor: r.flavor,
  nominal: r.nominal,
  borrowingLimit: r.borrowing_limit,
  lendingLimit: r.lending_limit,
  cpuMillisLimit: r.cpu_millis_limit,
  memoryMiBLimit: r.memory_mib_limit,
});

/**
 * A timestamp as epoch milliseconds (float8, whole ms as Date#getTime gives): a number parses far cheaper
 * than a timestamptz into a Date, and a snapshot reads thousands of them every cycle.
 */
function epochMs(column: string): string {
  return `floor(extract(epoch from ${column}) * 1000)::float8`;
}

/** Columns of jobs that make a JobSpec (plus version), as one select list. */
const JOB_COLUMNS = `j.id::text AS id, j.name, j.team, j.kind::text AS kind, j.priority, j.preemptible, j.replicas,
  j.min_replicas, j.accelerators_per_replica, j.cpu_millis_per_replica, j.memory_mib_per_replica, j.flavors,
  j.flavor_selection::text AS flavor_selection, j.speeds, j.topology_level::text AS topology_level, j.tpu_shape,
  j.expected_runtime_seconds, ${epochMs('j.submitted_at')} AS submitted_at, ${epochMs('j.queued_at')} AS queued_at, j.version,
  j.checkpoint, ${epochMs('j.last_checkpoint_at')} AS last_checkpoint_at, j.resume_fraction, j.roles,
  ${epochMs('j.last_preempted_at')} AS last_preempted_at,
  CASE WHEN jsonb_typeof(j.template -> 'nodeSelector') = 'object' THEN j.template -> 'nodeSelector' END AS node_selector`;

export interface JobRow {
  id: string;
  name: string;
  team: string;
  kind: JobKind;
  priority: number;
  preemptible: boolean;
  replicas: number;
  min_replicas: number;
  accelerators_per_replica: number;
  cpu_millis_per_replica: number;
  memory_mib_per_replica: number;
  flavors: string[];
  flavor_selection: FlavorSelection;
  speeds: Record<string, number> | null;
  topology_level: TopologyLevel;
  tpu_shape: string | null;
  expected_runtime_seconds: number | null;
  /** Epoch ms. */
  submitted_at: number;
  /** Epoch ms. */
  queued_at: number;
  version: number;
  checkpoint: { intervalSeconds: number; gracePeriodSeconds: number } | null;
  /** Epoch ms. */
  last_checkpoint_at: number | null;
  /** Epoch ms of its latest preemption; null = never preempted. */
  last_preempted_at: number | null;
  /** Fraction of its work done at the checkpoint its current (or next) run resumes from; null = from the start. */
  resume_fraction: number | null;
  /** The pod template's nodeSelector (validated by the API). */
  node_selector: Record<string, string> | null;
  /** A multi-role gang's roles (validated by the API); null for a job of one role. */
  roles: JobRole[] | null;
}

export interface RunningJobRow extends JobRow {
  flavor: string | null;
  /** Epoch ms. */
  admitted_at: number;
  preempted_jobs: string[] | null;
}

/** A job of the snapshot, running or pending, with its state. */
export interface ActiveJobRow extends RunningJobRow {
  state: 'PENDING' | 'ADMITTED' | 'BINDING' | 'RUNNING';
}

/** The states a job of the snapshot's `running` is in (it holds accelerators). */
export const HOLDING_SQL = `('ADMITTED', 'BINDING', 'RUNNING')`;

export const runningJobsSql = (where = 'TRUE'): string =>
  `SELECT ${JOB_COLUMNS}, j.preempted_jobs::text[] AS preempted_jobs,
          COALESCE(j.flavor, (SELECT a.flavor FROM allocations a WHERE a.job_id = j.id LIMIT 1)) AS flavor,
          ${epochMs('COALESCE(j.admitted_at, j.updated_at)')} AS admitted_at
   FROM jobs j
   WHERE j.state IN ${HOLDING_SQL} AND ${where}
   ORDER BY COALESCE(j.admitted_at, j.updated_at), j.id`;

/** Pending jobs the scheduler considers: a held one (held_at) stays out until released. */
export const pendingJobsSql = (where = 'TRUE'): string =>
  `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.state = 'PENDING' AND j.held_at IS NULL AND ${where} ORDER BY j.submitted_at, j.id`;

/** Running and pending jobs in one read (unordered; the caller orders them). */
export const activeJobsSql = (where = 'TRUE'): string =>
  `SELECT ${JOB_COLUMNS}, j.state::text AS state, j.preempted_jobs::text[] AS preempted_jobs,
          CASE WHEN j.state = 'PENDING' THEN NULL
               ELSE COALESCE(j.flavor, (SELECT a.flavor FROM allocations a WHERE a.job_id = j.id LIMIT 1)) END AS flavor,
          ${epochMs('COALESCE(j.admitted_at, j.updated_at)')} AS admitted_at
   FROM jobs j
   WHERE j.state IN ('PENDING', 'ADMITTED', 'BINDING', 'RUNNING') AND (j.state <> 'PENDING' OR j.held_at IS NULL) AND ${where}`;

export interface AllocationRow {
  job_id: string;
  replica: number;
  role: string | null;
  node: string;
  accelerators: number;
  cpu_millis: number;
  memory_mib: number;
}

/** Allocations of the jobs that hold accelerators; `where` may name `a` (allocations) and `j` (jobs). */
export const allocationsSql = (where = 'TRUE'): string =>
  `SELECT a.job_id::text AS job_id, a.replica, a.role, a.node, a.accelerators, a.cpu_millis, a.memory_mib
   FROM allocations a JOIN jobs j ON j.id = a.job_id
   WHERE j.state IN ${HOLDING_SQL} AND ${where}
   ORDER BY a.job_id, a.replica`;

/** Placements by job id, replicas in order. */
export function placementsOf(rows: readonly AllocationRow[]): Map<string, ReplicaPlacement[]> {
  const placements = new Map<string, ReplicaPlacement[]>();
  for (const a of rows) {
    let list = placements.get(a.job_id);
    if (!list) placements.set(a.job_id, (list = []));
    const placement: ReplicaPlacement = { replica: a.replica, node: a.node, accelerators: a.accelerators, cpuMillis: a.cpu_millis, memoryMiB: a.memory_mib };
    if (a.role !== null) placement.role = a.role;
    list.push(placement);
  }
  return placements;
}

function jobSpec(r: JobRow): JobSpec {
  const spec: JobSpec = {
    id: r.id,
    name: r.name,
    team: r.team,
    kind: r.kind,
    priority: r.priority,
    preemptible: r.preemptible,
    replicas: r.replicas,
    minReplicas: r.min_replicas,
    acceleratorsPerReplica: r.accelerators_per_replica,
    cpuMillisPerReplica: r.cpu_millis_per_replica,
    memoryMiBPerReplica: r.memory_mib_per_replica,
    flavors: r.flavors,
    flavorSelection: r.flavor_selection,
    topology: r.tpu_shape === null ? { level: r.topology_level } : { level: r.topology_level, tpuShape: r.tpu_shape },
    expectedRuntimeSeconds: remainingRuntime(r),
    submittedAt: r.submitted_at,
  };
  if (r.speeds !== null) spec.speeds = r.speeds;
  if (r.checkpoint !== null) spec.checkpoint = r.checkpoint;
  if (r.node_selector !== null && Object.keys(r.node_selector).length > 0) spec.topology.nodeSelector = r.node_selector;
  if (r.roles !== null && r.roles.length > 1) spec.roles = r.roles;
  return spec;
}

/**
 * The runtime the core expects of the job's current run (running: from its admission; pending: its next
 * run): a job that checkpoints and was requeued resumes from its checkpoint, so it has only the rest of its
 * work left — `expectedRuntimeSeconds × (1 − resume_fraction)`, as the simulator gives the core a requeued
 * job's remaining work. The core's expected ends, reservations, backfill and moves all start from it.
 */
function remainingRuntime(r: Pick<JobRow, 'expected_runtime_seconds' | 'checkpoint' | 'resume_fraction'>): number | null {
  const full = r.expected_runtime_seconds;
  const done = r.resume_fraction;
  if (full === null || r.checkpoint === null || done === null || !(done > 0)) return full;
  return Math.max(1, Math.ceil(full * (1 - Math.min(1, done))));
}

/*
 * Running and pending jobs extend jobSpec's fresh object (Object.assign) rather than spread it into a new
 * literal: V8 copies a spread of an object this large through a slow path that gives every copy a hidden
 * class of its own (2,993 maps for 3,000 jobs, checked with %HaveSameMap), so the core's per-job property
 * reads in every cycle never hit an inline cache. Extending keeps one shape per set of optional fields.
 */
export function runningJobOf(r: RunningJobRow, placement: ReplicaPlacement[]): RunningJob {
  const job: RunningJob = Object.assign(jobSpec(r), { flavor: r.flavor ?? '', placement, admittedAt: r.admitted_at });
  if (r.preempted_jobs !== null && r.preempted_jobs.length > 0) job.preempted = r.preempted_jobs;
  if (r.last_checkpoint_at !== null) job.lastCheckpointAt = r.last_checkpoint_at;
  if (r.last_preempted_at !== null) job.lastPreemptedAt = r.last_preempted_at;
  return job;
}

export function pendingJobOf(r: JobRow): PendingJob {
  return Object.assign(jobSpec(r), { queuedAt: r.queued_at });
}
