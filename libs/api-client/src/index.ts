import type { components } from './schema.js';

/**
 * The REST API's contract for its clients (the CLI, the console, scripts): every type here is derived from
 * `schema.ts`, which `npm run api:contract` generates from the server's own OpenAPI document. Nothing is
 * declared by hand: when a view changes on the server, the build of every client sees it.
 */
export type { components, operations, paths } from './schema.js';

type Schemas = components['schemas'];

export type Job = Schemas['JobView'];
export type JobDetail = Schemas['JobDetailView'];
export type JobState = Job['state'];
export type JobKind = Job['kind'];
export type Pending = Schemas['PendingView'];
export type Progress = Schemas['ProgressView'];
export type Transition = Schemas['TransitionView'];
export type Allocation = Schemas['AllocationView'];
export type JobEvent = Schemas['JobEventView'];
/** What a job's executor reports: its state (POST /v1/jobs/{id}/status), its progress (POST /v1/jobs/{id}/progress). */
export type JobStatusReport = Schemas['JobStatusDto'];
export type JobProgressReport = Schemas['JobProgressDto'];
export type JobList = Schemas['JobListView'];
export type Whoami = Schemas['WhoamiView'];
export type Flavor = Schemas['FlavorView'];
export type TopologyLabels = Schemas['TopologyLabelsView'];
export type TopologyLevelName = keyof TopologyLabels;
export type Cohort = Schemas['CohortView'];
export type QuotaUsage = Schemas['QuotaUsageView'];
export type QuotaView = Schemas['QuotaView'];
export type QuotaSet = Schemas['QuotaSetView'];
export type Team = Schemas['TeamView'];
export type ClusterNode = Schemas['NodeView'];
export type UsageItem = Schemas['UsageItemView'];
export type UsageReport = Schemas['UsageReportView'];
export type Budget = Schemas['BudgetView'];
export type Token = Schemas['TokenView'];
export type Queue = Schemas['QueueView'];
export type Placement = Schemas['PlacementView'];
export type FlavorCapacity = Schemas['FlavorCapacityView'];
export type Overview = Schemas['OverviewView'];
export type History = Schemas['HistoryView'];
export type SchedulerStatus = Schemas['SchedulerStatusView'];
export type AuditEntry = Schemas['AuditEntryView'];
export type FleetNode = Schemas['FleetNodeView'];
export type FleetHistory = Schemas['FleetHistoryView'];
export type FleetHistoryPoint = Schemas['FleetHistoryPointView'];
export type PriorityClass = Schemas['PriorityClassView'];
export type Price = Schemas['PriceView'];
export type Problem = Schemas['ProblemDoc'];
export type FieldError = Schemas['FieldErrorDoc'];

/** A page of a list answer: its items (and, where the API pages by cursor, the next cursor). */
export interface List<T> {
  items: T[];
  nextCursor?: string | null;
}

/** Every job state, in lifecycle order; the compiler fails here when the API adds or drops one. */
export const JOB_STATES = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED'] as const satisfies readonly JobState[];
const allStatesListed: Exclude<JobState, (typeof JOB_STATES)[number]> extends never ? true : never = true;
void allStatesListed;

/** States a job never leaves. */
export const FINAL_STATES: ReadonlySet<JobState> = new Set<JobState>(['SUCCEEDED', 'FAILED', 'CANCELLED']);
