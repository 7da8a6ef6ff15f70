import type { CheckpointPolicy, JobKind as CoreJobKind, JobRole, JobState } from '#core';
import type { Prisma } from '../generated/prisma/client.js';
import { jobKindFromDb } from '../enums.js';

export type JobKindName = CoreJobKind;

/**
 * The columns of `jobs` a list shows (everything but the scheduler's private bookkeeping: reservation,
 * preempted_jobs, updated_at; and but the pod template, the one column a member makes as large as a request
 * body: a page of 500 would carry 500 of them, ADR 0025). Row types are Prisma's (ADR 0018); only the API's
 * spelling of the kind and the JSON columns' shapes are layered on.
 */
export const JOB_SUMMARY_SELECT = {
  id: true,
  name: true,
  team: true,
  kind: true,
  priority: true,
  priorityClass: true,
  preemptible: true,
  replicas: true,
  minReplicas: true,
  acceleratorsPerReplica: true,
  cpuMillisPerReplica: true,
  memoryMiBPerReplica: true,
  flavors: true,
  flavorSelection: true,
  speeds: true,
  topologyLevel: true,
  tpuShape: true,
  expectedRuntimeSeconds: true,
  checkpoint: true,
  roles: true,
  state: true,
  flavor: true,
  admittedReplicas: true,
  pendingCode: true,
  pendingMessage: true,
  pendingPosition: true,
  pendingEstimatedStartAt: true,
  heldBy: true,
  heldAt: true,
  heldByAdmin: true,
  preemptedBy: true,
  preemptionCount: true,
  submittedAt: true,
  queuedAt: true,
  admittedAt: true,
  startedAt: true,
  finishedAt: true,
  createdBy: true,
  version: true,
  lastCheckpointAt: true,
  completedFraction: true,
  namespace: true,
} as const satisfies Prisma.JobSelect;
type JobSummaryPayload = Prisma.JobGetPayload<{ select: typeof JOB_SUMMARY_SELECT }>;

/** The columns of `jobs` a job record shows: a list's, and the pod template. */
export const JOB_SELECT = { ...JOB_SUMMARY_SELECT, template: true } as const satisfies Prisma.JobSelect;
type JobPayload = Prisma.JobGetPayload<{ select: typeof JOB_SELECT }>;

/** The columns of a job every read shows, JSON typed. `lastCheckpointAt` / `completedFraction`: progress its executor reported (POST /v1/jobs/{id}/progress). */
type JobColumns = Omit<JobSummaryPayload, 'kind' | 'speeds' | 'checkpoint' | 'roles'> & {
  kind: JobKindName;
  speeds: Record<string, number> | null;
  /** Declared checkpointing (core CheckpointPolicy); null = none. */
  checkpoint: CheckpointPolicy | null;
  /** A multi-role gang's roles (core JobRole); null for a job of one role. */
  roles: JobRole[] | null;
};

/** A stored job, with its pod template. */
export type JobRecord = JobColumns & { template: Record<string, unknown> };

/**
 * A job as lists read it: without its pod template, but with the one small part of it lists show — the
 * Kubernetes workload (apiVersion, kind, namespace, name, uid) a job imported from one stands for (the
 * template's `workload`; null for a job submitted over REST).
 */
export type JobSummary = JobColumns & { workload: Record<string, unknown> | null };

/** What a submission stores (validated and defaulted by the API); the rest of a JobRecord is the database's. */
export type NewJob = Pick<
  JobRecord,
  | 'name'
  | 'team'
  | 'kind'
  | 'priority'
  | 'preemptible'
  | 'replicas'
  | 'minReplicas'
  | 'acceleratorsPerReplica'
  | 'cpuMillisPerReplica'
  | 'memoryMiBPerReplica'
  | 'flavors'
  | 'flavorSelection'
  | 'speeds'
  | 'topologyLevel'
  | 'tpuShape'
  | 'expectedRuntimeSeconds'
  | 'template'
> & {
  checkpoint?: CheckpointPolicy | null;
  /** The class the priority came from (absent: none). */
  priorityClass?: string | null;
  /** A multi-role gang's roles; the per-replica fields then hold their envelope (core `envelopeOf`). */
  roles?: JobRole[] | null;
  /** The Kubernetes namespace of its pods (a REST job's team's; absent: none, as for an imported job). */
  namespace?: string | null;
  /** The API token that submits it (absent: none — the bootstrap admin, an importer). */
  createdByToken?: string | null;
};

export const ALLOCATION_SELECT = { replica: true, role: true, node: true, accelerators: true, cpuMillis: true, memoryMiB: true } as const satisfies Prisma.AllocationSelect;
export type AllocationRecord = Prisma.AllocationGetPayload<{ select: typeof ALLOCATION_SELECT }>;

export const TRANSITION_SELECT = { from: true, to: true, at: true, reason: true } as const satisfies Prisma.JobTransitionSelect;
export type TransitionRecord = Prisma.JobTransitionGetPayload<{ select: typeof TRANSITION_SELECT }>;

/** A job with its placement (replicas in order) and its state history (oldest first). */
export const JOB_DETAIL_SELECT = {
  ...JOB_SELECT,
  allocations: { select: ALLOCATION_SELECT, orderBy: { replica: 'asc' } },
  transitions: { select: TRANSITION_SELECT, orderBy: { id: 'asc' } },
} as const satisfies Prisma.JobSelect;

export type JobDetail = JobRecord & { allocation: AllocationRecord[]; transitions: TransitionRecord[] };

/** The columns of a row read with JOB_SUMMARY_SELECT (or more): the kind in the API's spelling, the JSON columns typed. */
function toJobColumns(row: JobSummaryPayload): JobColumns {
  return {
    ...row,
    kind: jobKindFromDb(row.kind),
    speeds: row.speeds as JobColumns['speeds'],
    checkpoint: row.checkpoint as JobColumns['checkpoint'],
    roles: row.roles as JobColumns['roles'],
  };
}

/** The record of a row read with JOB_SELECT. */
export function toJobRecord(row: JobPayload): JobRecord {
  return { ...toJobColumns(row), template: row.template as JobRecord['template'] };
}

/** The summary of a row read with JOB_SUMMARY_SELECT, with the workload its template names (null: none). */
export function toJobSummary(row: JobSummaryPayload, workload: Record<string, unknown> | null): JobSummary {
  return { ...toJobColumns(row), workload };
}

export function toJobDetail(row: Prisma.JobGetPayload<{ select: typeof JOB_DETAIL_SELECT }>): JobDetail {
  const { allocations, transitions, ...job } = row;
  return { ...toJobRecord(job), allocation: allocations, transitions };
}

export const EVENT_SELECT = { id: true, at: true, kind: true, jobId: true, team: true, actor: true, message: true, data: true } as const satisfies Prisma.EventSelect;

/** An event (decision or audit log); the id is the bigint's decimal text, the data JSON. */
export type EventRecord = Omit<Prisma.EventGetPayload<{ select: typeof EVENT_SELECT }>, 'id' | 'data'> & { id: string; data: unknown };

export const toEventRecord = (e: Prisma.EventGetPayload<{ select: typeof EVENT_SELECT }>): EventRecord => ({ ...e, id: e.id.toString() });

export type SubmitResult =
  | { kind: 'created'; job: JobDetail }
  | { kind: 'replayed'; job: JobDetail }
  | { kind: 'key-reused'; jobId: string }
  | { kind: 'unknown-references'; team: boolean; flavors: boolean };

export interface JobListFilter {
  /** Restrict to these teams (a member's scope); undefined = all. */
  teams?: readonly string[];
  team?: string;
  state?: JobState;
  kind?: JobKindName;
  /** Only jobs of this exact name. */
  name?: string;
  limit: number;
  /** Keyset: return jobs strictly older than this (submittedAt, id) pair. */
  before?: { submittedAt: Date; id: string };
}

export type StateChange =
  | { kind: 'changed'; job: JobDetail }
  | { kind: 'unchanged'; job: JobDetail }
  | { kind: 'invalid'; from: JobState }
  | { kind: 'missing' };
