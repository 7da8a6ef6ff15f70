import { ApiProperty } from '@nestjs/swagger';
import { POD_POLICY_FIELDS, teamNamespaces, type TeamFlavorUsage } from '#core';
import type { QuotaRecord, TeamRecord } from '#db';
import { TimeProperty } from '../response.doc.js';
import { PodPolicyView } from './pod-policy.dto.js';
import { RECLAIM, WITHIN_TEAM } from './team.dto.js';

/** A team's quota for one flavor with its live usage (libs/core teamUsage). */
export class QuotaUsageView {
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ example: 32 })
  nominal!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'null = no limit' })
  borrowingLimit!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'null = no limit' })
  lendingLimit!: number | null;
  @ApiProperty({ description: 'Accelerators held by its admitted and running jobs.' })
  used!: number;
  @ApiProperty({ description: 'Of `used`, above nominal (from the cohort).' })
  borrowed!: number;
  @ApiProperty({ description: 'Of its nominal, used by other teams of the cohort.' })
  lent!: number;
  @ApiProperty({ description: 'Accelerators its pending jobs ask for.' })
  pendingDemand!: number;
  @ApiProperty({ type: Number, nullable: true, description: "CPU (millicores) its replicas may hold on the flavor's nodes; null = no limit." })
  cpuMillisLimit!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Memory (MiB) likewise; null = no limit.' })
  memoryMiBLimit!: number | null;
  @ApiProperty({ description: "CPU (millicores) its admitted and running replicas hold on the flavor's nodes, accelerator-less ones too." })
  cpuMillisUsed!: number;
  @ApiProperty({ description: 'Memory (MiB) likewise.' })
  memoryMiBUsed!: number;
}

export class PreemptionView {
  @ApiProperty({ enum: WITHIN_TEAM })
  withinTeam!: (typeof WITHIN_TEAM)[number];
  @ApiProperty({ enum: RECLAIM })
  reclaimWithinCohort!: (typeof RECLAIM)[number];
}

/** The limits that apply to the team's submissions: its own, or the configured defaults. */
export class TeamLimitsView {
  @ApiProperty({ example: 50000, description: 'Most jobs it may have PENDING at once (429 `maxPendingJobs` beyond).' })
  maxPendingJobs!: number;
  @ApiProperty({ example: 200, description: 'Most job submissions per second across the API replicas (429 `submissionsPerSecond` beyond).' })
  submissionsPerSecond!: number;
  @ApiProperty({
    type: [String],
    example: ['submissionsPerSecond'],
    description: 'Which of the two are the configured defaults (QM_TEAM_MAX_PENDING_JOBS, QM_TEAM_SUBMISSIONS_PER_SECOND) rather than set for the team.',
  })
  defaults!: string[];
}

export class TeamView {
  @ApiProperty({ example: 'vision' })
  name!: string;
  @ApiProperty({ type: String, nullable: true, example: 'research' })
  cohort!: string | null;
  @ApiProperty({ example: 1 })
  fairShareWeight!: number;
  @ApiProperty({ type: () => PreemptionView })
  preemption!: PreemptionView;
  @ApiProperty({ type: String, nullable: true, example: 'high', description: 'The highest priority class its members may choose; null = up to the default class.' })
  maxPriorityClass!: string | null;
  @ApiProperty({ type: () => TeamLimitsView })
  limits!: TeamLimitsView;
  @ApiProperty({ type: () => PodPolicyView, description: "What its jobs' pod templates may reference (every list empty: nothing)." })
  podPolicy!: PodPolicyView;
  @ApiProperty({ type: [String], example: ['vision'], description: 'Kubernetes namespaces whose annotated pods and workloads may name it (by default its own name).' })
  namespaces!: string[];
  @ApiProperty({ type: [QuotaUsageView] })
  quotas!: QuotaUsageView[];
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

export class TeamListView {
  @ApiProperty({ type: [TeamView] })
  items!: TeamView[];
}

export class QuotaView {
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ example: 32 })
  nominal!: number;
  @ApiProperty({ type: Number, nullable: true })
  borrowingLimit!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  lendingLimit!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: "Most CPU (millicores) the team's replicas may hold on the flavor's nodes; null = no limit." })
  cpuMillisLimit!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Most memory (MiB) likewise; null = no limit.' })
  memoryMiBLimit!: number | null;
}

/** A quota set: the quota after, the one before (null when created), and the audit event. */
export class QuotaSetView extends QuotaView {
  @ApiProperty({ type: () => QuotaView, nullable: true })
  before!: QuotaView | null;
  @ApiProperty({ example: '42', description: 'Id of the audit event (GET /v1/audit).' })
  eventId!: string;
}

/** A quota deleted: the one before, and the audit event. */
export class QuotaDeletedView {
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ type: () => QuotaView })
  before!: QuotaView;
  @ApiProperty({ nullable: true, enum: [null], description: 'Always null.' })
  after!: null;
  @ApiProperty({ example: '43' })
  eventId!: string;
}

export const usageView = (u: TeamFlavorUsage): QuotaUsageView => ({
  flavor: u.flavor,
  nominal: u.nominal,
  borrowingLimit: u.borrowingLimit,
  lendingLimit: u.lendingLimit,
  used: u.used,
  borrowed: u.borrowed,
  lent: u.lent,
  pendingDemand: u.pendingDemand,
  cpuMillisLimit: u.cpuMillisLimit,
  memoryMiBLimit: u.memoryMiBLimit,
  cpuMillisUsed: u.cpuMillisUsed,
  memoryMiBUsed: u.memoryMiBUsed,
});

/** The configured defaults of the per-team limits. */
export interface LimitDefaults {
  maxPendingJobs: number;
  submissionsPerSecond: number;
}

export const limitsView = (t: Pick<TeamRecord, 'maxPendingJobs' | 'submissionsPerSecond'>, defaults: LimitDefaults): TeamLimitsView => ({
  maxPendingJobs: t.maxPendingJobs ?? defaults.maxPendingJobs,
  submissionsPerSecond: t.submissionsPerSecond ?? defaults.submissionsPerSecond,
  defaults: [...(t.maxPendingJobs === null ? ['maxPendingJobs'] : []), ...(t.submissionsPerSecond === null ? ['submissionsPerSecond'] : [])],
});

export const teamView = (t: TeamRecord, usage: readonly TeamFlavorUsage[], defaults: LimitDefaults): TeamView => ({
  name: t.name,
  cohort: t.cohort,
  fairShareWeight: t.fairShareWeight,
  preemption: { withinTeam: t.withinTeam, reclaimWithinCohort: t.reclaimWithinCohort },
  maxPriorityClass: t.maxPriorityClass,
  limits: limitsView(t, defaults),
  podPolicy: Object.fromEntries(POD_POLICY_FIELDS.map((f) => [f, [...t.podPolicy[f]]])) as unknown as PodPolicyView,
  namespaces: teamNamespaces(t.name, t.namespaces),
  quotas: usage.map(usageView),
  createdAt: t.createdAt.toISOString(),
  updatedAt: t.updatedAt.toISOString(),
});

export const quotaView = (q: QuotaRecord): QuotaView => ({
  team: q.team,
  flavor: q.flavor,
  nominal: q.nominal,
  borrowingLimit: q.borrowingLimit,
  lendingLimit: q.lendingLimit,
  cpuMillisLimit: q.cpuMillisLimit,
  memoryMiBLimit: q.memoryMiBLimit,
});
