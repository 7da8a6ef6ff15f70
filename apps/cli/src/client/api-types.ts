/** The REST API's shapes that `qm` reads (see docs/api-quickstart.md); `-o json` prints them unchanged. */

export type JobState = 'PENDING' | 'ADMITTED' | 'BINDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'PREEMPTED';
export const JOB_STATES: readonly JobState[] = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED'];
export const FINAL_STATES: ReadonlySet<JobState> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export interface Pending {
  code: string | null;
  message: string;
  position: number | null;
  estimatedStartAt: string | null;
}

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
  cpuMillisPerReplica: number;
  memoryMiBPerReplica: number;
  flavors: string[];
  flavorSelection: string;
  topology: { level: string; tpuShape?: string };
  expectedRuntimeSeconds: number | null;
  template: {
    image?: string;
    command?: string[];
    args?: string[];
    /** Imported from a workload: the group of a LeaderWorkerSet, and the pods per role. */
    workloadGroup?: string | null;
    roles?: { name: string; count: number; minCount: number }[];
    /** Imported from annotated pods (quartermaster.io/gang). */
    importedFrom?: { namespace: string; gang: string };
  };
  /** The Kubernetes workload (Job, JobSet, TrainJob, RayCluster, RayJob, LeaderWorkerSet) the job was imported from. */
  workload?: { apiVersion: string; kind: string; namespace: string; name: string; uid: string };
  state: JobState;
  flavor: string | null;
  admittedReplicas: number | null;
  pending: Pending | null;
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

export interface JobEvent {
  id: string;
  at: string;
  kind: string;
  actor: string;
  message: string;
  data: unknown;
}

export interface List<T> {
  items: T[];
  nextCursor?: string | null;
}

export interface Whoami {
  subject: string;
  role: 'admin' | 'member' | 'executor';
  teams: string[];
}

export interface Flavor {
  name: string;
  kind: string;
  resourceName: string;
  nodeLabels: Record<string, string>;
  /** Node label key each topology level is read from (the kind's defaults filled in). */
  topologyLabels: Partial<Record<TopologyLevelName, string>>;
  memoryGiB: number | null;
  relativeSpeed: number;
  costPerHour: number;
}

export type TopologyLevelName = 'zone' | 'block' | 'domain' | 'tpuShape';

export interface Cohort {
  name: string;
  description: string;
  members: string[];
  /** Per flavor: capacity = the members' nominal quota, and their use. */
  flavors: { flavor: string; capacity: number; used: number; borrowed: number; lent: number; pendingDemand: number }[];
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
  preemption: { withinTeam: string; reclaimWithinCohort: string };
  quotas: QuotaUsage[];
}

export interface ClusterNode {
  name: string;
  flavor: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
  topology: { zone?: string; block?: string; domain?: string; tpuShape?: string };
  /** Jobs' node selectors match these. */
  labels?: Record<string, string>;
  schedulable: boolean;
  source: string;
}

export interface UsageItem {
  team?: string;
  flavor?: string;
  period?: string;
  periodStart?: string;
  acceleratorHours: number;
  wastedAcceleratorHours: number;
  acceleratorSeconds: number;
  wastedAcceleratorSeconds: number;
  cost: number;
  jobsCompleted: number;
  nominalShare: number | null;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: string[];
  teams: string[] | null;
  items: UsageItem[];
  total: UsageItem;
}

export interface Budget {
  team: string;
  period: 'day' | 'week' | 'month';
  limit: number;
  unit: 'accelerator-hours' | 'currency';
  onExhausted: 'warn' | 'block';
  current: { period: string; periodStart: string; periodEnd: string; used: number; acceleratorHours: number; cost: number; ratio: number | null; state: 'ok' | 'warning' | 'exhausted' };
}
