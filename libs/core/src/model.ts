/**
 * The scheduling core's model: what a cycle reads (a Snapshot) and what it decides (a CycleResult).
 *
 * Conventions used everywhere in libs/core:
 * - Accelerators, CPU millicores and memory MiB are non-negative integers, typed by unit (quantity.ts:
 *   the compiler keeps them apart). `null` in a limit means "no limit" (see amount.ts for the arithmetic);
 *   no floating point is used on quantities.
 * - Times are epoch milliseconds (numbers). The core never reads a clock: `Snapshot.now` is the time.
 * - Names are DNS labels; ids are opaque strings, unique per job. Every list in the output is in a
 *   deterministic order (see each field).
 */

import type { Accelerators, CpuMillis, MemoryMiB, Resources } from './quantity.js';

export type FlavorKind = 'nvidia-gpu' | 'aws-trainium' | 'intel-gaudi' | 'google-tpu';

/** One accelerator type as the cluster offers it. */
export interface Flavor {
  name: string;
  kind: FlavorKind;
  /** The extended resource it is counted in, e.g. `nvidia.com/gpu`. */
  resourceName: string;
  /** Throughput relative to a reference accelerator (1.0). Used when a job asks for the fastest flavor. */
  relativeSpeed: number;
  costPerHour: number;
  memoryGiB?: number;
  /** The node labels its nodes' topology is read from (messages name them when no node carries one). */
  topologyLabels?: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>>;
}

/** Where a node sits. Every level is optional; a missing level never matches a topology requirement. */
export interface NodeTopology {
  zone?: string;
  /** Block / rack / spine group. */
  block?: string;
  /** NVLink domain (`nvidia.com/gpu.clique`) or TPU ICI slice id. */
  domain?: string;
  /** For TPU hosts: the shape of the slice the host belongs to, e.g. `2x4` (`cloud.google.com/gke-tpu-topology`). */
  tpuShape?: string;
}

export interface ClusterNode {
  name: string;
  flavor: string;
  /** Allocatable accelerators of the node's flavor. */
  accelerators: Accelerators;
  cpuMillis: CpuMillis;
  memoryMiB: MemoryMiB;
  topology: NodeTopology;
  /** False when cordoned or NotReady: the node keeps its running work but receives none. */
  schedulable: boolean;
  /**
   * Capacity held by work the core does not manage (pods placed by other schedulers).
   * Counted as used. Defaults to zero.
   */
  external?: Resources;
  /** The node's labels (a Kubernetes Node's, or as given over REST); read only for jobs with a `nodeSelector`. */
  labels?: Record<string, string>;
}

export interface Cohort {
  name: string;
}

/** Who a team may preempt inside itself. */
export type WithinTeamPolicy = 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority';
/** Whom a team may preempt in other teams of its cohort, to reclaim capacity they borrow from it. */
export type ReclaimPolicy = 'Never' | 'LowerPriority' | 'Any';

export interface Team {
  name: string;
  /** The borrowing pool; `null` = the team neither lends nor borrows. */
  cohort: string | null;
  /** Positive integer weight for fair share (a team of weight 2 is entitled to twice the share). */
  fairShareWeight: number;
  preemption: { withinTeam: WithinTeamPolicy; reclaimWithinCohort: ReclaimPolicy };
}

/** Quota of one team for one flavor. A team without a Quota for a flavor cannot use that flavor. */
export interface Quota {
  team: string;
  flavor: string;
  /** Guaranteed accelerators. */
  nominal: Accelerators;
  /** Most the team may use above `nominal`, taken from the cohort's idle share. `null` = no limit. */
  borrowingLimit: Accelerators | null;
  /** Most of the team's idle nominal that other cohort members may use. `null` = all of it. */
  lendingLimit: Accelerators | null;
  /**
   * Most CPU (millicores) the team's jobs may hold on nodes of this flavor at once, summed over every replica —
   * those without accelerators too. A cap of its own, never borrowed or lent. `null`/absent = no limit.
   */
  cpuMillisLimit?: CpuMillis | null;
  /** The same for memory (MiB). */
  memoryMiBLimit?: MemoryMiB | null;
}

/**
 * What a job does. `serving` (inference servers; LeaderWorkerSets and RayClusters from Kubernetes) has no end
 * of its own: unless it gives `expectedRuntimeSeconds`, estimates treat it as never ending — its accelerators
 * are never expected back, so no reservation or start estimate counts on them, and it is never moved.
 */
export const JOB_KINDS = ['training', 'eval', 'batch-inference', 'serving'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export type TopologyLevel = 'none' | 'zone' | 'block' | 'domain';

export interface TopologyRequirement {
  /** All replicas inside one zone / block / domain. */
  level: TopologyLevel;
  /** TPU slice shape: all replicas inside one domain whose nodes carry this `tpuShape`. Implies level `domain`. */
  tpuShape?: string;
  /**
   * Only nodes carrying every one of these labels (the job's pod template `nodeSelector`), combined with the
   * level: e.g. all replicas in one block, among the nodes labelled `topology.kubernetes.io/zone=us-east-1a`.
   */
  nodeSelector?: Record<string, string>;
}

/**
 * How to choose among a job's acceptable flavors.
 * - `preference`: the order the job lists them.
 * - `fastest`: highest effective speed first (`speeds[flavor]` if given, else the flavor's `relativeSpeed`),
 *   ties by listed order.
 */
export type FlavorSelection = 'preference' | 'fastest';

/**
 * A job that checkpoints: every `intervalSeconds` of running (or as its executor reports), and on
 * eviction within `gracePeriodSeconds`. Preemption then loses only the work since the last checkpoint,
 * and a requeued job resumes from it.
 */
export interface CheckpointPolicy {
  intervalSeconds: number;
  /** Time the job is given to checkpoint when evicted (the pod's termination grace period in Kubernetes). */
  gracePeriodSeconds: number;
}

/**
 * One role of a multi-role gang (Kueue's pod set): `replicas` pods of one shape, of which at least
 * `minReplicas` for an elastic start. A driver, head, launcher or leader is a role of its own, often without
 * accelerators; workers, actors and learners are others (roles.ts).
 */
export interface JobRole {
  /** DNS label, unique within the job. */
  name: string;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: Accelerators;
  cpuMillisPerReplica: CpuMillis;
  memoryMiBPerReplica: MemoryMiB;
}

/** What every job (pending or running) carries. */
export interface JobSpec {
  id: string;
  name: string;
  team: string;
  kind: JobKind;
  /** Larger is more important. */
  priority: number;
  preemptible: boolean;
  /**
   * The gang's roles, each with its own shape (roles.ts). Absent (or one role): every replica has the shape
   * below. With several roles, the fields below are the envelope the estimates use — `replicas` and
   * `minReplicas` the sums over roles, the per-replica figures the largest of any role — while admission,
   * quota and placement charge each role its own shape.
   */
  roles?: JobRole[];
  /** Desired replica count. */
  replicas: number;
  /** Elastic gangs: the least replica count the job accepts (≤ replicas). Equal to `replicas` for rigid gangs. */
  minReplicas: number;
  acceleratorsPerReplica: Accelerators;
  cpuMillisPerReplica: CpuMillis;
  memoryMiBPerReplica: MemoryMiB;
  /** Acceptable flavors, most preferred first. Non-empty. */
  flavors: string[];
  flavorSelection: FlavorSelection;
  /** Optional per-job effective speed per flavor (e.g. steps/s measured for this model). */
  speeds?: Record<string, number>;
  topology: TopologyRequirement;
  /**
   * Used for reservations, backfill and start-time estimates. `null` = unknown. With `speeds`, the
   * runtime on the job's fastest acceptable flavor (scaled by speed on the others: `runtimeOn`). For a job
   * that resumes from a checkpoint (requeued, pending or running again), the runtime of the work it has
   * left when its run starts: apps and the simulator pass that, the core counts from `admittedAt`.
   */
  expectedRuntimeSeconds: number | null;
  /** Epoch ms of submission (of the latest requeue for preempted jobs: see `queuedAt`). */
  submittedAt: number;
  /** Declared checkpointing; absent = a preempted job restarts from scratch. */
  checkpoint?: CheckpointPolicy;
}

export interface PendingJob extends JobSpec {
  /**
   * Epoch ms since which the job waits in the queue (submission, or requeue after preemption).
   * Ordering uses `submittedAt`, so a preempted job keeps its place; `queuedAt` is for reporting.
   */
  queuedAt?: number;
}

export interface ReplicaPlacement {
  replica: number;
  /** The role the replica belongs to (multi-role gangs only; replicas are numbered role after role). */
  role?: string;
  node: string;
  accelerators: Accelerators;
  cpuMillis: CpuMillis;
  memoryMiB: MemoryMiB;
}

/** A job that holds an allocation (ADMITTED, BINDING or RUNNING). */
export interface RunningJob extends JobSpec {
  flavor: string;
  /** One entry per admitted replica (its length is the admitted replica count). */
  placement: ReplicaPlacement[];
  /** Epoch ms of admission. The minimum-runtime rule for preemption counts from here. */
  admittedAt: number;
  /**
   * Ids of the jobs this job preempted when it was admitted (its `Admission.preempts`, kept by the app).
   * Optional. The core never picks this job as a victim for one of them, so no job ever preempts its
   * own preemptor back, even when quotas or usage changed in between.
   */
  preempted?: string[];
  /**
   * Epoch ms of its last checkpoint in this run, as its executor reported it. Absent: estimated from
   * `checkpoint.intervalSeconds` since admission, or admission itself for a job that does not checkpoint.
   */
  lastCheckpointAt?: number;
  /**
   * Epoch ms of its latest preemption (when it was requeued), if it was ever preempted. For
   * max(minRuntimeBeforePreemptionSeconds, 15 min) after it, the job is a victim again only for a job of
   * higher priority (preemption-candidates.ts: no thrashing).
   */
  lastPreemptedAt?: number;
}

export interface SchedulerOptions {
  /** Whether the cycle may preempt at all. */
  preemption: boolean;
  /** A job admitted less than this many seconds ago cannot be preempted. */
  minRuntimeBeforePreemptionSeconds: number;
  /** Whether later jobs may start while an earlier one waits (on capacity that does not delay reservations). */
  backfill: boolean;
  /** How many blocked jobs (in order) get a reservation. Later blocked jobs get a position but no start time. */
  reservationDepth: number;
  /** Runtime assumed for a running job whose `expectedRuntimeSeconds` is null (for start-time estimates). */
  defaultExpectedRuntimeSeconds: number;
  /**
   * Admissions per team per cycle; `null` = no limit. `1` reproduces the "one admission per queue per
   * cycle" behaviour of other schedulers (used by the simulator to compare policies).
   */
  maxAdmissionsPerTeamPerCycle: number | null;
  /**
   * How a job with `flavorSelection: 'fastest'` and several flavors is placed (relative-placement.ts):
   * `relative-speed` (default) — by its relative advantage at this cycle's flavor prices, taking a
   * slower flavor only when it finishes sooner there than waiting; `fastest-free` — the fastest flavor
   * that fits now (the previous behaviour).
   */
  flavorPlacement?: 'relative-speed' | 'fastest-free';
  /**
   * Relative-speed placement: how much the delay a slower run causes the other waiting jobs counts against
   * taking a slower flavor now (relative-placement.ts `finishesSooner`). A flavor slower than the job's home is
   * taken only when the job finishes there earlier than waiting for its home by more than this weight × the
   * other pending jobs that accept one of its flavors × the extra accelerator-time of its slower run ÷ the
   * accelerators of its flavors.
   * Absent: 1 (its own gain must outweigh the others' summed delay); 0: only its own finish counts (the rule
   * before 2026-12-03).
   */
  slowerFlavorDelayWeight?: number;
  /** Overrides every job's `flavorSelection` when set (the simulator's heterogeneity-agnostic policy). */
  flavorSelectionOverride?: FlavorSelection | 'random';
  /** Seed for `random` flavor selection, so that even that policy is deterministic. */
  seed?: number;
  /**
   * Order of pending jobs of equal priority within a team (ordering.ts): `fifo` (the default) — by
   * submission; `shortest-first` — least expected accelerator-seconds first, aged by the time waited
   * (highest response ratio next), so no job waits forever. Fair share between teams comes first either way.
   */
  ordering?: 'fifo' | 'shortest-first';
  /** Moves of running checkpointing jobs to faster flavors (moves.ts); absent = the defaults, `maxPerCycle: 0` = off. */
  moves?: Partial<MoveOptions>;
}

/**
 * When a running job that checkpoints moves to a faster flavor (moves.ts). Defaults: 4 per cycle, at
 * least 30 min and 20 % of its remaining time earlier, 300 s to restart.
 */
export interface MoveOptions {
  /** Most moves per cycle (0 = no moves). */
  maxPerCycle: number;
  /** A move must be expected to finish the job at least this many seconds earlier… */
  minGainSeconds: number;
  /** …and at least this fraction of its remaining time on its current flavor earlier. */
  minGainFraction: number;
  /** Seconds a moved job needs to start again from its checkpoint (image pull, loading), added to its grace period. */
  restartSeconds: number;
}

export interface Snapshot {
  now: number;
  flavors: Flavor[];
  nodes: ClusterNode[];
  cohorts: Cohort[];
  teams: Team[];
  quotas: Quota[];
  running: RunningJob[];
  pending: PendingJob[];
  options: SchedulerOptions;
  /**
   * Teams whose budget blocks new jobs now (decided by the app from its usage ledger). Their pending jobs
   * are not admitted: BUDGET_EXHAUSTED, estimated to start at `until`. Running jobs are not affected.
   */
  budgetBlocks?: BudgetBlock[];
}

export interface BudgetBlock {
  team: string;
  /** Epoch ms when the next budget period begins (the earliest start of the team's pending jobs). */
  until: number;
  /** Names the budget and the figures, e.g. `team vision used 1,002 of its 1,000 accelerator-hours of 2026-11`. */
  message: string;
}

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

export interface Admission {
  jobId: string;
  team: string;
  flavor: string;
  /** Admitted replica count (between minReplicas and replicas). */
  replicas: number;
  /** Node of every admitted replica, replica 0..replicas-1. */
  placement: ReplicaPlacement[];
  /** Accelerators of this admission taken above the team's nominal quota (borrowed from the cohort). */
  borrowed: Accelerators;
  /** Jobs preempted to make room for this one (ids, also listed in `CycleResult.preemptions`). */
  preempts: string[];
  /** Why this flavor, when relative-speed placement chose it (e.g. `on k80 at 95% of its best speed: …`). */
  reason?: string;
}

/**
 * A running job moved to a faster flavor: preempted (given its grace period to checkpoint) and admitted
 * again on `to` in the same cycle, resuming from its checkpoint.
 */
export interface Move {
  jobId: string;
  team: string;
  /** Flavor it runs on now, and the one it moves to. */
  from: string;
  to: string;
  replicas: number;
  /** Its new nodes, replica 0..replicas-1. */
  placement: ReplicaPlacement[];
  /** Accelerators of the new placement taken above the team's nominal quota. */
  borrowed: Accelerators;
  /** Accelerator-seconds of work done since its last checkpoint, done again after the move. */
  lostAcceleratorSeconds: number;
  /** Epoch ms of that checkpoint (its admission when it does not checkpoint): the work after it is redone. */
  lostSince: number;
  /** Its checkpoint grace period (seconds) to evict it with. */
  gracePeriodSeconds: number;
  /** Expected end (epoch ms) where it is, and on `to` after the move (restart cost included). */
  expectedEndBefore: number;
  expectedEndAfter: number;
  /** e.g. `moved from k80 to v100: expected to finish 40 h earlier; redoes 0.3 accelerator-hours since its last checkpoint`. */
  message: string;
}

export type PreemptionKind = 'WithinTeam' | 'ReclaimWithinCohort';

export interface Preemption {
  victimJobId: string;
  victimTeam: string;
  preemptorJobId: string;
  kind: PreemptionKind;
  /** Accelerator-seconds of work the victim loses: accelerators × time since its last checkpoint (always set by the core). */
  lostAcceleratorSeconds?: number;
  /** Epoch ms of the checkpoint the victim resumes from (its admission when it does not checkpoint): the lost work is the work after it (always set by the core). */
  lostSince?: number;
  /** The victim's checkpoint grace period (seconds) to evict it with; 0 when it does not checkpoint. */
  gracePeriodSeconds?: number;
  /** Human-readable, e.g. `preempted by a job of team vision (priority 100 > 10) to reclaim 16 h100-80gb lent to team nlp`. */
  message: string;
}

export interface Reservation {
  jobId: string;
  flavor: string;
  /** Earliest epoch ms at which the job can start, from running jobs' expected end times. */
  startAt: number;
  /** Nodes (and accelerators on each) held for it from `startAt`. */
  nodes: { node: string; accelerators: Accelerators }[];
}

export type PendingCode =
  /** The team's quota (nominal + borrowing limit) for every acceptable flavor is used up. */
  | 'QUOTA_EXCEEDED'
  /** The team may borrow, but the cohort has no idle lendable capacity left. */
  | 'COHORT_EXHAUSTED'
  /** The team has no quota for any of the job's flavors. */
  | 'NO_QUOTA'
  /** Quota allows it, but no set of nodes has enough free accelerators/CPU/memory now. */
  | 'INSUFFICIENT_CAPACITY'
  /** Quota allows it, but no single zone/block/domain/TPU slice has enough free capacity. */
  | 'TOPOLOGY_UNSATISFIABLE'
  /** Would fit, but starting it now would delay an earlier job's reservation. */
  | 'BLOCKED_BY_RESERVATION'
  /** The per-team admission limit of this cycle was reached (only with maxAdmissionsPerTeamPerCycle). */
  | 'ADMISSION_LIMIT'
  /** It can never fit: larger than the whole fleet of every acceptable flavor (or than its quota ceiling). */
  | 'UNSATISFIABLE'
  /** A referenced flavor or team does not exist in the snapshot. */
  | 'INVALID'
  /** The team's budget for the current period is used up and set to block new jobs (Snapshot.budgetBlocks). */
  | 'BUDGET_EXHAUSTED'
  /** Held by a user or an admin (set by the apps, never by a cycle: a held job is not in the snapshot). */
  | 'HELD';

export interface PendingReason {
  jobId: string;
  code: PendingCode;
  /** Names the team, flavor and figure, e.g. `team vision uses 32 of 32 nominal h100-80gb; cohort research has 0 idle`. */
  message: string;
  /** 1-based position of the job in this cycle's order among jobs left pending. */
  position: number;
  /** Reserved (or estimated) start, epoch ms; `null` when unknown. */
  estimatedStartAt: number | null;
}

export interface CycleStats {
  /** Pending jobs considered. */
  considered: number;
  admitted: number;
  preempted: number;
  reserved: number;
}

export interface CycleResult {
  /** In the order they were decided. */
  admissions: Admission[];
  /** In the order they were decided. */
  preemptions: Preemption[];
  reservations: Reservation[];
  /** Running jobs moved to a faster flavor, in the order decided (absent or empty: none). */
  moves?: Move[];
  /** One entry for every pending job not admitted, in queue order. */
  pending: PendingReason[];
  stats: CycleStats;
}

export const DEFAULT_OPTIONS: SchedulerOptions = {
  preemption: true,
  minRuntimeBeforePreemptionSeconds: 0,
  backfill: true,
  reservationDepth: 4,
  defaultExpectedRuntimeSeconds: 3600,
  maxAdmissionsPerTeamPerCycle: null,
};
