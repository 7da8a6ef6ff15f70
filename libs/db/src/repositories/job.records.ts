import type { CheckpointPolicy, JobKind as CoreJobKind, JobRole, JobState } from '#core';
import type { Prisma } from '../generated/prisma/client.js';
import { jobKindFromDb } from '../enums.js';

export type JobKindName = CoreJobKind;

/**
 * The columns of `jobs` a job record shows (everything but the scheduler's private bookkeeping:
 * reservation, preempted_jobs, updated_at). Row types are Prisma's (ADR 0018); only the API's spelling of
 * the kind and the JSON columns' shapes are layered on.
 */
export const JOB_SELECT = {
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
  template: true,
  checkpoint: true,
  roles: true,
  state: true,
  flavor: true,
  admittedReplicas: true,
  pendingCode: true,
  pendingMessage: true,
  pendingPosition: true,
  pendingEstimatedStartAt: true,
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
} as const satisfies Prisma.JobSelect;
type JobPayload = Prisma.JobGetPayload<{ select: typeof JOB_SELECT }>;

/** A stored job. `lastCheckpointAt` / `completedFraction`: progress its executor reported (POST /v1/jobs/{id}/progress). */
export type JobRecord = Omit<JobPayload, 'kind' | 'speeds' | 'template' | 'checkpoint' | 'roles'> & {
  kind: JobKindName;
  speeds: Record<string, number> | null;
  template: Record<string, unknown>;
  /** Declared checkpointing (core CheckpointPolicy); null = none. */
  checkpoint: CheckpointPolicy | null;
  /** A multi-role gang's roles (core JobRole); null for a job of one role. */
  roles: JobRole[] | null;
};

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

/** The record of a row read with JOB_SELECT: the kind in the API's spelling, the JSON columns typed. */
export function toJobRecord(row: JobPayload): JobRecord {
  return {
    ...row,
    kind: jobKindFromDb(row.kind),
    speeds: row.speeds as JobRecord['speeds'],
    template: row.template as JobRecord['template'],
    checkpoint: row.checkpoint as JobRecord['checkpoint'],
    roles: row.roles as JobRecord['roles'],
  };
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
