import { ApiProperty } from '@nestjs/swagger';
import type { BudgetRecord, BudgetStatus } from '#db';
import { TimeProperty } from '../response.doc.js';
import { BUDGET_ACTION_EFFECTS, BUDGET_ACTIONS, BUDGET_PERIODS, BUDGET_UNITS } from './accounting.dto.js';

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** One line of GET /v1/usage (and its `total`); grouping fields appear as grouped by. */
export class UsageItemView {
  @ApiProperty({ required: false, example: 'vision' })
  team?: string;
  @ApiProperty({
    required: false,
    example: 'alice',
    description: "Who submitted the jobs (groupBy user): a token's subject, `kubernetes` for jobs imported from the cluster, `(job deleted)` for those whose team was deleted.",
  })
  user?: string;
  @ApiProperty({
    required: false,
    type: String,
    nullable: true,
    format: 'uuid',
    description:
      'The API token that submitted them (groupBy user): a user is a token, so two tokens that share a subject are two lines. Null for the bootstrap admin token and for jobs imported from the cluster or gone with their team.',
  })
  userToken?: string | null;
  @ApiProperty({ required: false, example: 'h100-80gb' })
  flavor?: string;
  @ApiProperty({ required: false, example: '2026-11-30', description: '`2026-11-30` (groupBy day) or `2026-11` (groupBy month), UTC.' })
  period?: string;
  @TimeProperty({ required: false })
  periodStart?: string;
  @ApiProperty()
  acceleratorHours!: number;
  @ApiProperty({
    description:
      'Thrown away: the whole run for a failure or a requeue; for a preemption or a move, only the work after the checkpoint the job resumes from (what the scheduler said it loses).',
  })
  wastedAcceleratorHours!: number;
  @ApiProperty()
  acceleratorSeconds!: number;
  @ApiProperty()
  wastedAcceleratorSeconds!: number;
  @ApiProperty()
  cost!: number;
  @ApiProperty()
  jobsCompleted!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'acceleratorHours ÷ (nominal quota × hours of the period in the window); null without nominal quota.' })
  nominalShare!: number | null;
}

export class UsageReportView {
  @TimeProperty()
  from!: string;
  @TimeProperty()
  to!: string;
  @ApiProperty({ type: [String], example: ['team', 'flavor'] })
  groupBy!: string[];
  @ApiProperty({ type: [String], nullable: true, description: "The teams the figures cover: the caller's for a member; null = all." })
  teams!: string[] | null;
  @ApiProperty({ type: [UsageItemView] })
  items!: UsageItemView[];
  @ApiProperty({ type: () => UsageItemView })
  total!: UsageItemView;
}

export class PriceView {
  @ApiProperty({ example: 4 })
  costPerHour!: number;
  @TimeProperty()
  effectiveFrom!: string;
}

export class PriceListView {
  @ApiProperty({ type: [PriceView] })
  items!: PriceView[];
}

/** The budget's current period and its use. */
export class BudgetPeriodView {
  @ApiProperty({ example: '2026-11', description: '`2026-11`, `2026-W48` or `2026-11-30`.' })
  period!: string;
  @TimeProperty()
  periodStart!: string;
  @TimeProperty()
  periodEnd!: string;
  @ApiProperty({ description: 'acceleratorHours or cost, as the unit says.' })
  used!: number;
  @ApiProperty()
  acceleratorHours!: number;
  @ApiProperty()
  cost!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'used / limit; null for a zero limit with use.' })
  ratio!: number | null;
  @ApiProperty({
    example: 2,
    description:
      'How far use is over the limit so far (used − limit, in the unit; 0 within it): with warn and block, the running jobs go on and this grows; ' +
      'with stop, it is what ran until the cycle that stopped them (and any grace period).',
  })
  overshoot!: number;
  @ApiProperty({ enum: ['ok', 'warning', 'exhausted'] })
  state!: BudgetStatus['state'];
}

/** What a budget does once used up (its onExhausted), to the team's new and running jobs. */
export class BudgetEffectView {
  @ApiProperty({ enum: ['admitted', 'wait'], description: "The team's new jobs: admitted (warn), or kept PENDING with BUDGET_EXHAUSTED until the next period (block, stop)." })
  newJobs!: 'admitted' | 'wait';
  @ApiProperty({
    enum: ['continue', 'stop'],
    description:
      "The team's running jobs: they go on (warn, block — the team's use can pass the limit), or they are stopped within one scheduling cycle (stop): " +
      'requeued to PENDING with BUDGET_EXHAUSTED after their checkpoint grace period, until the next period.',
  })
  runningJobs!: 'continue' | 'stop';
  @ApiProperty({ example: BUDGET_ACTION_EFFECTS.block.summary })
  summary!: string;
}

/** A budget as it was set (audit trail's before). */
export class BudgetRecordView {
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ enum: BUDGET_PERIODS })
  period!: BudgetRecord['period'];
  @ApiProperty({ example: 5000 })
  limit!: number;
  @ApiProperty({ enum: BUDGET_UNITS })
  unit!: BudgetRecord['unit'];
  @ApiProperty({ enum: BUDGET_ACTIONS })
  onExhausted!: BudgetRecord['onExhausted'];
}

export class BudgetView extends BudgetRecordView {
  @ApiProperty({ type: () => BudgetPeriodView })
  current!: BudgetPeriodView;
  @ApiProperty({ type: () => BudgetEffectView, description: 'What onExhausted does once the budget is used up.' })
  whenExhausted!: BudgetEffectView;
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

export class BudgetListView {
  @ApiProperty({ type: [BudgetView] })
  items!: BudgetView[];
}

/** A budget set: the budget after, the one before (null when created), and the audit event. */
export class BudgetSetView extends BudgetView {
  @ApiProperty({ type: () => BudgetRecordView, nullable: true })
  before!: BudgetRecordView | null;
  @ApiProperty({ example: '42' })
  eventId!: string;
}

export class BudgetDeletedView {
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ enum: BUDGET_PERIODS })
  period!: BudgetRecord['period'];
  @ApiProperty({ type: () => BudgetRecordView })
  before!: BudgetRecordView;
  @ApiProperty({ nullable: true, enum: [null], description: 'Always null.' })
  after!: null;
  @ApiProperty({ example: '43' })
  eventId!: string;
}

export const budgetRecordView = (b: BudgetRecord): BudgetRecordView => ({ team: b.team, period: b.period, limit: b.limit, unit: b.unit, onExhausted: b.onExhausted });

export function budgetView(b: BudgetStatus): BudgetView {
  return {
    ...budgetRecordView(b),
    current: {
      period: b.periodLabel,
      periodStart: b.periodStart.toISOString(),
      periodEnd: b.periodEnd.toISOString(),
      used: round(b.used, 6),
      acceleratorHours: round(b.acceleratorHours, 6),
      cost: round(b.cost, 6),
      ratio: Number.isFinite(b.ratio) ? round(b.ratio, 6) : null,
      overshoot: round(Math.max(0, b.used - b.limit), 6),
      state: b.state,
    },
    whenExhausted: { ...BUDGET_ACTION_EFFECTS[b.onExhausted] },
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}
