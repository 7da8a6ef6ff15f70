import { ApiProperty } from '@nestjs/swagger';
import { MapProperty, TimeProperty } from '../response.doc.js';

export class LeaderView {
  @ApiProperty({ example: 'scheduler-7f9c' })
  holder!: string;
  @ApiProperty({ description: 'False once the lease expired without renewal.' })
  live!: boolean;
  @ApiProperty({ example: '12', description: 'Grows on every change of holder.' })
  fencingToken!: string;
  @TimeProperty()
  renewedAt!: string;
  @TimeProperty()
  expiresAt!: string;
}

export class LastCycleView {
  @ApiProperty()
  number!: number;
  @TimeProperty()
  at!: string;
  @ApiProperty()
  durationMs!: number;
  @ApiProperty()
  admitted!: number;
  @ApiProperty()
  preempted!: number;
  @ApiProperty()
  pending!: number;
}

export class SchedulerStatusView {
  @ApiProperty({ type: () => LeaderView, nullable: true })
  leader!: LeaderView | null;
  @ApiProperty({ type: () => LastCycleView, nullable: true })
  lastCycle!: LastCycleView | null;
  @ApiProperty()
  pendingCount!: number;
}

export class CycleStatsView {
  @ApiProperty({ description: 'Pending jobs considered.' })
  considered!: number;
  @ApiProperty()
  admitted!: number;
  @ApiProperty()
  preempted!: number;
  @ApiProperty()
  reserved!: number;
}

export class AdmissionView {
  @ApiProperty({ format: 'uuid' })
  jobId!: string;
  @ApiProperty()
  team!: string;
  @ApiProperty()
  flavor!: string;
  @ApiProperty()
  replicas!: number;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Node of every admitted replica.' })
  placement!: unknown[];
  @ApiProperty({ description: 'Accelerators taken above nominal quota (borrowed from the cohort).' })
  borrowed!: number;
  @ApiProperty({ type: [String], description: 'Jobs preempted to make room for this one.' })
  preempts!: string[];
  @ApiProperty({ required: false })
  reason?: string;
}

export class PreemptionView {
  @ApiProperty({ format: 'uuid' })
  victimJobId!: string;
  @ApiProperty()
  victimTeam!: string;
  @ApiProperty({ format: 'uuid' })
  preemptorJobId!: string;
  @ApiProperty({ enum: ['WithinTeam', 'ReclaimWithinCohort'] })
  kind!: string;
  @ApiProperty({ required: false })
  lostAcceleratorSeconds?: number;
  @ApiProperty({ required: false })
  gracePeriodSeconds?: number;
  @ApiProperty()
  message!: string;
}

/** A running job moved to a flavor where it finishes sooner (evicted and admitted again in one commit). */
export class MoveView {
  @ApiProperty({ format: 'uuid' })
  jobId!: string;
  @ApiProperty()
  team!: string;
  @ApiProperty({ description: 'Flavor it ran on.' })
  from!: string;
  @ApiProperty({ description: 'Flavor it moves to.' })
  to!: string;
  @ApiProperty()
  replicas!: number;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Its new nodes, replica by replica.' })
  placement!: unknown[];
  @ApiProperty()
  borrowed!: number;
  @ApiProperty({ description: 'Accelerator-seconds of work since its last checkpoint, done again after the move.' })
  lostAcceleratorSeconds!: number;
  @ApiProperty()
  gracePeriodSeconds!: number;
  @TimeProperty({ nullable: true })
  expectedEndBefore!: string | null;
  @TimeProperty({ nullable: true })
  expectedEndAfter!: string | null;
  @ApiProperty()
  message!: string;
}

/** A running job a used-up `stop` budget stopped: requeued (PENDING, BUDGET_EXHAUSTED) after its grace period, until the budget's next period. */
export class BudgetStopView {
  @ApiProperty({ format: 'uuid' })
  jobId!: string;
  @ApiProperty()
  team!: string;
  @ApiProperty({ description: 'Flavor it ran on.' })
  flavor!: string;
  @ApiProperty({ description: 'Accelerators it held.' })
  accelerators!: number;
  @ApiProperty({ enum: ['day', 'week', 'month'], description: 'The budget that stopped it (its period kind).' })
  period!: string;
  @TimeProperty({ nullable: true, description: "When that budget's next period begins: the job waits until then (or until the budget is raised)." })
  until!: string | null;
  @ApiProperty({ description: 'Accelerator-seconds of work since its last checkpoint (its admission without one), lost.' })
  lostAcceleratorSeconds!: number;
  @ApiProperty({ description: 'Its checkpoint grace period to evict it with (0 when it does not checkpoint).' })
  gracePeriodSeconds!: number;
  @ApiProperty()
  message!: string;
}

export class ReservationView {
  @ApiProperty({ format: 'uuid' })
  jobId!: string;
  @ApiProperty()
  flavor!: string;
  @TimeProperty({ nullable: true })
  startAt!: string | null;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Nodes (and accelerators on each) held for it.' })
  nodes!: unknown[];
}

export class CyclePendingView {
  @ApiProperty({ format: 'uuid' })
  jobId!: string;
  @ApiProperty({ example: 'QUOTA_EXCEEDED' })
  code!: string;
  @ApiProperty()
  message!: string;
  @ApiProperty()
  position!: number;
  @TimeProperty({ nullable: true })
  estimatedStartAt!: string | null;
}

/** One cycle run on demand: its decisions and timings. */
export class CycleRunView {
  @ApiProperty()
  cycle!: number;
  @ApiProperty({ description: 'False for an idle cycle (no pending job, no decision): nothing was written.' })
  committed!: boolean;
  @TimeProperty({ nullable: true })
  startedAt!: string | null;
  @ApiProperty()
  durationMs!: number;
  @MapProperty('number', { description: 'Time per phase (snapshot, decide, check, commit …), ms.' })
  phasesMs!: Record<string, number>;
  @ApiProperty({ type: () => CycleStatsView })
  stats!: CycleStatsView;
  @ApiProperty({ type: [AdmissionView] })
  admissions!: AdmissionView[];
  @ApiProperty({ type: [PreemptionView] })
  preemptions!: PreemptionView[];
  @ApiProperty({ type: [MoveView] })
  moves!: MoveView[];
  @ApiProperty({ type: [BudgetStopView], description: 'Running jobs stopped by a used-up `stop` budget in this cycle.' })
  budgetStops!: BudgetStopView[];
  @ApiProperty({ type: [ReservationView] })
  reservations!: ReservationView[];
  @ApiProperty({ type: [CyclePendingView] })
  pending!: CyclePendingView[];
}
