import { ApiProperty } from '@nestjs/swagger';
import { JOB_KINDS, type JobState } from '#core';
import type { EventRecord, JobDetail, JobRecord, JobSummary } from '#db';
import { MapProperty, ObjectProperty, TimeProperty } from '../response.doc.js';

const JOB_STATES = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED'] as const;

export class JobTopologyView {
  @ApiProperty({ enum: ['none', 'zone', 'block', 'domain'] })
  level!: JobRecord['topologyLevel'];
  @ApiProperty({ required: false, example: '4x4' })
  tpuShape?: string;
}

export class CheckpointView {
  @ApiProperty({ example: 1800 })
  intervalSeconds!: number;
  @ApiProperty({ example: 60 })
  gracePeriodSeconds!: number;
}

export class ProgressView {
  @TimeProperty({ nullable: true })
  lastCheckpointAt!: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 0.4 })
  completedFraction!: number | null;
}

/** Why a pending job waits, where it stands and when it should start. */
export class PendingView {
  @ApiProperty({ type: String, nullable: true, example: 'QUOTA_EXCEEDED' })
  code!: string | null;
  @ApiProperty({ example: 'waiting for the next scheduling cycle' })
  message!: string;
  @ApiProperty({ type: Number, nullable: true })
  position!: number | null;
  @TimeProperty({ nullable: true })
  estimatedStartAt!: string | null;
}

export class JobRoleView {
  @ApiProperty({ example: 'worker' })
  name!: string;
  @ApiProperty({ example: 4 })
  replicas!: number;
  @ApiProperty({ example: 4 })
  minReplicas!: number;
  @ApiProperty({ example: 8 })
  acceleratorsPerReplica!: number;
  @ApiProperty({ example: 8000 })
  cpuMillisPerReplica!: number;
  @ApiProperty({ example: 65536 })
  memoryMiBPerReplica!: number;
}

export class AllocationView {
  @ApiProperty()
  replica!: number;
  @ApiProperty({ type: String, nullable: true, example: 'worker', description: "The replica's role (null for a job of one role)." })
  role!: string | null;
  @ApiProperty({ example: 'gpu-1' })
  node!: string;
  @ApiProperty()
  accelerators!: number;
  @ApiProperty()
  cpuMillis!: number;
  @ApiProperty()
  memoryMiB!: number;
}

export class TransitionView {
  @ApiProperty({ enum: JOB_STATES, nullable: true })
  from!: JobState | null;
  @ApiProperty({ enum: JOB_STATES })
  to!: JobState;
  @TimeProperty()
  at!: string;
  @ApiProperty()
  reason!: string;
}

/** The Kubernetes workload (Job, JobSet, TrainJob, RayCluster, RayJob, LeaderWorkerSet) a job was imported from. */
export class WorkloadRefView {
  @ApiProperty({ example: 'jobset.x-k8s.io/v1alpha2' })
  apiVersion!: string;
  @ApiProperty({ example: 'JobSet' })
  kind!: string;
  @ApiProperty({ example: 'vision' })
  namespace!: string;
  @ApiProperty({ example: 'llama-ft' })
  name!: string;
  @ApiProperty({ format: 'uuid' })
  uid!: string;
}

/**
 * A job as lists show it: everything but its pod template (at most QM_MAX_TEMPLATE_BYTES each, 64 KiB by
 * default: GET /v1/jobs/{id} has it), so that a page's size is bounded by its `limit` (ADR 0025).
 */
export class JobView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'llama-ft-7' })
  name!: string;
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ enum: JOB_KINDS })
  kind!: JobRecord['kind'];
  @ApiProperty()
  priority!: number;
  @ApiProperty({ type: String, nullable: true, example: 'high', description: 'The class its priority came from; null for a number an admin gave (or a job older than classes).' })
  priorityClass!: string | null;
  @ApiProperty()
  preemptible!: boolean;
  @ApiProperty()
  replicas!: number;
  @ApiProperty()
  minReplicas!: number;
  @ApiProperty()
  acceleratorsPerReplica!: number;
  @ApiProperty()
  cpuMillisPerReplica!: number;
  @ApiProperty()
  memoryMiBPerReplica!: number;
  @ApiProperty({
    type: () => [JobRoleView],
    nullable: true,
    description: 'A multi-role gang\'s roles (null for a job of one role); replicas, minReplicas and the per-replica figures above are then their sums and largest shape.',
  })
  roles!: JobRoleView[] | null;
  @ApiProperty({ type: [String], example: ['h100-80gb'] })
  flavors!: string[];
  @ApiProperty({ enum: ['preference', 'fastest'] })
  flavorSelection!: JobRecord['flavorSelection'];
  @MapProperty('number', { nullable: true, example: { 'h100-80gb': 2.1 } })
  speeds!: Record<string, number> | null;
  @ApiProperty({ type: () => JobTopologyView })
  topology!: JobTopologyView;
  @ApiProperty({ type: Number, nullable: true })
  expectedRuntimeSeconds!: number | null;
  @ApiProperty({ type: () => CheckpointView, nullable: true })
  checkpoint!: CheckpointView | null;
  @ApiProperty({ type: () => ProgressView })
  progress!: ProgressView;
  @ApiProperty({ enum: JOB_STATES })
  state!: JobState;
  @ApiProperty({ type: String, nullable: true, description: 'Admitted flavor.' })
  flavor!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  admittedReplicas!: number | null;
  @ApiProperty({ type: () => PendingView, nullable: true, description: 'Only while PENDING.' })
  pending!: PendingView | null;
  @ApiProperty({ type: () => HoldView, nullable: true, description: 'Only while PENDING and held (POST /v1/jobs/{id}/hold): the scheduler passes it over until released.' })
  hold!: HoldView | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' })
  preemptedBy!: string | null;
  @ApiProperty()
  preemptionCount!: number;
  @ApiProperty()
  createdBy!: string;
  @TimeProperty()
  submittedAt!: string;
  @TimeProperty()
  queuedAt!: string;
  @TimeProperty({ nullable: true })
  admittedAt!: string | null;
  @TimeProperty({ nullable: true })
  startedAt!: string | null;
  @TimeProperty({ nullable: true })
  finishedAt!: string | null;
  @ApiProperty({ type: () => WorkloadRefView, required: false, description: 'The Kubernetes workload a job imported from one stands for.' })
  workload?: WorkloadRefView;
  @ApiProperty({
    required: false,
    example: 'vision',
    description: "The Kubernetes namespace of a REST job's pods: its team's first namespace when it was submitted (absent for a job imported from the cluster, whose pods stay where they are).",
  })
  namespace?: string;
}

/** A job with its pod template, placement and state history. */
export class JobDetailView extends JobView {
  @ObjectProperty({ description: 'Pod template: image, command, args, env, cpuMillis, memoryMiB, … (not in lists: GET /v1/jobs and GET /v1/queue leave it out).' })
  template!: Record<string, unknown>;
  @ApiProperty({ type: [AllocationView] })
  allocation!: AllocationView[];
  @ApiProperty({ type: [TransitionView] })
  transitions!: TransitionView[];
}

export class JobListView {
  @ApiProperty({ type: [JobView] })
  items!: JobView[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last.' })
  nextCursor!: string | null;
}

/** An event of the decision and audit log. */
export class JobEventView {
  @ApiProperty({ example: '42' })
  id!: string;
  @TimeProperty()
  at!: string;
  @ApiProperty({ example: 'job.admitted' })
  kind!: string;
  @ApiProperty()
  actor!: string;
  @ApiProperty()
  message!: string;
  @ObjectProperty()
  data!: unknown;
}

/** One job a bulk cancel cancelled. */
export class CancelledJobView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'sweep-lr' })
  name!: string;
  @ApiProperty({ enum: JOB_STATES, description: 'The state it was cancelled from.' })
  from!: JobState;
}

/** A job of a bulk hold or release. */
export class HeldJobView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'sweep-lr' })
  name!: string;
}

/** What a bulk hold or release (POST /v1/jobs/holds, /v1/jobs/releases) did. */
export class JobHoldsView {
  @ApiProperty({ description: 'How many jobs this call held (or released).' })
  changed!: number;
  @ApiProperty({ type: [HeldJobView], description: 'The jobs held or released (in a dry run: those that would be).' })
  jobs!: HeldJobView[];
  @ApiProperty({ description: 'More jobs matched than `limit`: call again for the next ones.' })
  more!: boolean;
  @ApiProperty({ description: 'A dry run: `jobs` are those that would have been, and nothing changed.' })
  dryRun!: boolean;
}

/** Who holds a held job, and since when. */
export class HoldView {
  @ApiProperty({ example: 'alice' })
  by!: string;
  @TimeProperty()
  at!: string;
  @ApiProperty({ description: 'Held by an admin: only an admin releases it.' })
  byAdmin!: boolean;
}

/** What a bulk cancel (POST /v1/jobs/cancellations) did. */
export class JobCancellationsView {
  @ApiProperty({ description: 'How many jobs this call cancelled.' })
  cancelled!: number;
  @ApiProperty({ type: [CancelledJobView], description: 'The jobs cancelled (in a dry run: those that would be).' })
  jobs!: CancelledJobView[];
  @ApiProperty({ description: 'More jobs matched than `limit`: call again for the next ones.' })
  more!: boolean;
  @ApiProperty({ description: 'A dry run: `jobs` are those that would have been cancelled, and nothing changed.' })
  dryRun!: boolean;
}

export class JobEventListView {
  @ApiProperty({ type: [JobEventView] })
  items!: JobEventView[];
}

export const eventView = (e: EventRecord): JobEventView => ({ id: e.id, at: e.at.toISOString(), kind: e.kind, actor: e.actor, message: e.message, data: e.data });

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The job as the API shows it: with its pod template, allocation and transitions. */
export function jobView(j: JobDetail): JobDetailView {
  const view = summaryView(j, (j.template as Record<string, unknown> | null)?.['workload']);
  return {
    ...view,
    template: j.template,
    allocation: j.allocation,
    transitions: j.transitions.map((t) => ({ from: t.from, to: t.to, at: t.at.toISOString(), reason: t.reason })),
  };
}

/** A job as lists show it: without its pod template (ADR 0025). */
export function jobSummaryView(j: JobSummary): JobView {
  return summaryView(j, j.workload);
}

function summaryView(j: Omit<JobRecord, 'template'>, workload: unknown): JobView {
  const view: JobView = {
    id: j.id,
    name: j.name,
    team: j.team,
    kind: j.kind,
    priority: j.priority,
    priorityClass: j.priorityClass,
    preemptible: j.preemptible,
    replicas: j.replicas,
    minReplicas: j.minReplicas,
    acceleratorsPerReplica: j.acceleratorsPerReplica,
    cpuMillisPerReplica: j.cpuMillisPerReplica,
    memoryMiBPerReplica: j.memoryMiBPerReplica,
    roles: j.roles ?? null,
    flavors: j.flavors,
    flavorSelection: j.flavorSelection,
    speeds: j.speeds,
    topology: j.tpuShape === null ? { level: j.topologyLevel } : { level: j.topologyLevel, tpuShape: j.tpuShape },
    expectedRuntimeSeconds: j.expectedRuntimeSeconds,
    checkpoint: j.checkpoint ?? null,
    progress: { lastCheckpointAt: iso(j.lastCheckpointAt ?? null), completedFraction: j.completedFraction ?? null },
    state: j.state,
    flavor: j.flavor,
    admittedReplicas: j.admittedReplicas,
    pending:
      j.state === 'PENDING'
        ? {
            code: j.pendingCode,
            message: j.pendingMessage ?? 'waiting for the next scheduling cycle',
            position: j.pendingPosition,
            estimatedStartAt: iso(j.pendingEstimatedStartAt),
          }
        : null,
    hold: j.state === 'PENDING' && j.heldAt !== null ? { by: j.heldBy ?? '', at: j.heldAt.toISOString(), byAdmin: j.heldByAdmin } : null,
    preemptedBy: j.preemptedBy,
    preemptionCount: j.preemptionCount,
    createdBy: j.createdBy,
    submittedAt: j.submittedAt.toISOString(),
    queuedAt: j.queuedAt.toISOString(),
    admittedAt: iso(j.admittedAt),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
  };
  // A job imported from a Kubernetes workload (Job, JobSet, TrainJob, RayCluster/RayJob, LeaderWorkerSet) names it.
  if (workload && typeof workload === 'object') view.workload = workload as WorkloadRefView;
  if (j.namespace !== null && j.namespace !== undefined) view.namespace = j.namespace;
  return view;
}
