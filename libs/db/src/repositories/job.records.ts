import type { JobState } from '#core';

export type JobKindName = 'training' | 'eval' | 'batch-inference';

/** What a submission stores (validated and defaulted by the API). */
export interface NewJob {
  name: string;
  team: string;
  kind: JobKindName;
  priority: number;
  preemptible: boolean;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  cpuMillisPerReplica: number;
  memoryMiBPerReplica: number;
  flavors: string[];
  flavorSelection: 'preference' | 'fastest';
  speeds: Record<string, number> | null;
  topologyLevel: 'none' | 'zone' | 'block' | 'domain';
  tpuShape: string | null;
  expectedRuntimeSeconds: number | null;
  template: Record<string, unknown>;
  /** Declared checkpointing (core CheckpointPolicy); null or absent = none. */
  checkpoint?: { intervalSeconds: number; gracePeriodSeconds: number } | null;
}

export interface JobRecord extends NewJob {
  id: string;
  state: JobState;
  flavor: string | null;
  admittedReplicas: number | null;
  pendingCode: string | null;
  pendingMessage: string | null;
  pendingPosition: number | null;
  pendingEstimatedStartAt: Date | null;
  preemptedBy: string | null;
  preemptionCount: number;
  submittedAt: Date;
  queuedAt: Date;
  admittedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdBy: string;
  version: number;
  /** Progress its executor reported (POST /v1/jobs/{id}/progress). */
  lastCheckpointAt?: Date | null;
  completedFraction?: number | null;
}

export interface AllocationRecord {
  replica: number;
  node: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
}

export interface TransitionRecord {
  from: JobState | null;
  to: JobState;
  at: Date;
  reason: string;
}

export interface JobDetail extends JobRecord {
  allocation: AllocationRecord[];
  transitions: TransitionRecord[];
}

export interface EventRecord {
  id: string;
  at: Date;
  kind: string;
  jobId: string | null;
  team: string | null;
  actor: string;
  message: string;
  data: unknown;
}

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
  limit: number;
  /** Keyset: return jobs strictly older than this (submittedAt, id) pair. */
  before?: { submittedAt: Date; id: string };
}

export type StateChange =
  | { kind: 'changed'; job: JobDetail }
  | { kind: 'unchanged'; job: JobDetail }
  | { kind: 'invalid'; from: JobState }
  | { kind: 'missing' };
