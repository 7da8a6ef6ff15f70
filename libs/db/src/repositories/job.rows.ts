import type { JobState } from '#core';
import type { JobDetail, JobRecord, NewJob } from './job.records.js';

export interface JobRow {
  id: string;
  name: string;
  team: string;
  kind: NewJob['kind'];
  priority: number;
  preemptible: boolean;
  replicas: number;
  min_replicas: number;
  accelerators_per_replica: number;
  cpu_millis_per_replica: number;
  memory_mib_per_replica: number;
  flavors: string[];
  flavor_selection: NewJob['flavorSelection'];
  speeds: Record<string, number> | null;
  topology_level: NewJob['topologyLevel'];
  tpu_shape: string | null;
  expected_runtime_seconds: number | null;
  template: Record<string, unknown>;
  state: JobState;
  flavor: string | null;
  admitted_replicas: number | null;
  pending_code: string | null;
  pending_message: string | null;
  pending_position: number | null;
  pending_estimated_start_at: Date | null;
  preempted_by: string | null;
  preemption_count: number;
  submitted_at: Date;
  queued_at: Date;
  admitted_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_by: string;
  version: number;
  checkpoint: { intervalSeconds: number; gracePeriodSeconds: number } | null;
  last_checkpoint_at: Date | null;
  completed_fraction: number | null;
}

export interface DetailRow extends JobRow {
  allocation: { replica: number; node: string; accelerators: number; cpuMillis: number; memoryMiB: number }[];
  transitions: { from: JobState | null; to: JobState; at: string; reason: string }[];
}

export const JOB_COLUMNS = `id, name, team, kind, priority, preemptible, replicas, min_replicas, accelerators_per_replica,
  cpu_millis_per_replica, memory_mib_per_replica, flavors, flavor_selection, speeds, topology_level, tpu_shape,
  expected_runtime_seconds, template, state, flavor, admitted_replicas, pending_code, pending_message, pending_position,
  pending_estimated_start_at, preempted_by, preemption_count, submitted_at, queued_at, admitted_at, started_at,
  finished_at, created_by, version, checkpoint, last_checkpoint_at, completed_fraction`;

const J_COLUMNS = JOB_COLUMNS.split(',').map((c) => `j.${c.trim()}`).join(', ');

export const DETAIL_SELECT = `SELECT ${J_COLUMNS},
  COALESCE((SELECT json_agg(json_build_object('replica', a.replica, 'node', a.node, 'accelerators', a.accelerators,
      'cpuMillis', a.cpu_millis, 'memoryMiB', a.memory_mib) ORDER BY a.replica) FROM allocations a WHERE a.job_id = j.id), '[]') AS allocation,
  COALESCE((SELECT json_agg(json_build_object('from', t."from", 'to', t."to", 'at', t.at, 'reason', t.reason) ORDER BY t.id)
      FROM job_transitions t WHERE t.job_id = j.id), '[]') AS transitions
  FROM jobs j`;

export const toRecord = (r: JobRow): JobRecord => ({
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
  speeds: r.speeds,
  topologyLevel: r.topology_level,
  tpuShape: r.tpu_shape,
  expectedRuntimeSeconds: r.expected_runtime_seconds,
  template: r.template,
  state: r.state,
  flavor: r.flavor,
  admittedReplicas: r.admitted_replicas,
  pendingCode: r.pending_code,
  pendingMessage: r.pending_message,
  pendingPosition: r.pending_position,
  pendingEstimatedStartAt: r.pending_estimated_start_at,
  preemptedBy: r.preempted_by,
  preemptionCount: r.preemption_count,
  submittedAt: r.submitted_at,
  queuedAt: r.queued_at,
  admittedAt: r.admitted_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  createdBy: r.created_by,
  version: r.version,
  checkpoint: r.checkpoint,
  lastCheckpointAt: r.last_checkpoint_at,
  completedFraction: r.completed_fraction,
});

export const toDetail = (r: DetailRow): JobDetail => ({
  ...toRecord(r),
  allocation: r.allocation,
  transitions: r.transitions.map((t) => ({ from: t.from, to: t.to, at: new Date(t.at), reason: t.reason })),
});

