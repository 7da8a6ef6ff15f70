/** Shapes of the REST answers the console reads (see docs/api-quickstart.md). */
export type JobState =
  'PENDING' | 'ADMITTED' | 'BINDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'PREEMPTED';

export interface Job {
  id: string;
  name: string;
  team: string;
  kind: string;
  priority: number;
  preemptible: boolean;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  flavors: string[];
  topology: { level: string; tpuShape?: string };
  expectedRuntimeSeconds: number | null;
  template: { image?: string };
  state: JobState;
  flavor: string | null;
  admittedReplicas: number | null;
  pending: {
    code: string | null;
    message: string;
    position: number | null;
    estimatedStartAt: string | null;
  } | null;
  preemptedBy: string | null;
  preemptionCount: number;
  createdBy: string;
  submittedAt: string;
  queuedAt: string;
  admittedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  allocation?: { replica: number; node: string; accelerators: number }[];
  transitions?: { from: JobState | null; to: JobState; at: string; reason: string }[];
}

export interface Page<T> {
  items: T[];
}

export interface QueuePage extends Page<Job> {
  total: number;
  limit: number;
  offset: number;
}

export interface JobEvent {
  id: string;
  at: string;
  kind: string;
  actor: string;
  message: string;
  data: unknown;
}

export interface Placement {
  flavor: string | null;
  items: {
    replica: number;
    node: string;
    accelerators: number;
    zone: string | null;
    block: string | null;
    domain: string | null;
    tpuShape: string | null;
  }[];
}

export interface FlavorCapacity {
  flavor: string;
  kind: string;
  nodes: number;
  total: number;
  allocated: number;
  free: number;
  unschedulable: number;
}

export interface Overview {
  scope: 'all teams' | string[];
  flavors: FlavorCapacity[];
  pendingByReason: { code: string | null; jobs: number; accelerators: number }[];
  jobs: Record<string, number>;
}

export interface History {
  since: string;
  until: string;
  stepMinutes: number;
  buckets: { at: string; cycles: number; admitted: number; preempted: number; maxDurationMs: number }[];
}

export interface SchedulerStatus {
  leader: {
    holder: string;
    live: boolean;
    fencingToken: string;
    renewedAt: string;
    expiresAt: string;
  } | null;
  lastCycle: {
    number: number;
    at: string;
    durationMs: number;
    admitted: number;
    preempted: number;
    pending: number;
  } | null;
  pendingCount: number;
}

export interface Flavor {
  name: string;
  kind: string;
  resourceName: string;
  memoryGiB: number | null;
  relativeSpeed: number;
  costPerHour: number;
}

export interface QuotaUsage {
  flavor: string;
  nominal: number;
  borrowingLimit: number | null;
  lendingLimit: number | null;
  used: number;
  borrowed: number;
  lent: number;
  pendingDemand: number;
}

export interface Team {
  name: string;
  cohort: string | null;
  fairShareWeight: number;
  quotas: QuotaUsage[];
}

export interface AuditEntry {
  id: string;
  at: string;
  kind: string;
  team: string | null;
  actor: string;
  message: string;
  data: { flavor?: string; period?: string; before?: unknown; after?: unknown };
}

export interface FleetNode {
  name: string;
  flavor: string;
  topology: { zone?: string; block?: string; domain?: string; tpuShape?: string };
  accelerators: number;
  allocated: number;
  external: number;
  free: number;
  jobs: number;
  schedulable: boolean;
}

export interface UsageFigures {
  acceleratorHours: number;
  wastedAcceleratorHours: number;
  cost: number;
  jobsCompleted: number;
  nominalShare: number | null;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: string[];
  teams: string[] | null;
  items: (UsageFigures & { team?: string; flavor?: string; period?: string; periodStart?: string })[];
  total: UsageFigures;
}

export interface Budget {
  team: string;
  period: 'day' | 'week' | 'month';
  limit: number;
  unit: 'accelerator-hours' | 'currency';
  onExhausted: 'warn' | 'block';
  current: {
    period: string;
    periodStart: string;
    periodEnd: string;
    used: number;
    acceleratorHours: number;
    cost: number;
    ratio: number | null;
    state: 'ok' | 'warning' | 'exhausted';
  };
}
