import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsName, IsText, NumberIn, OneOf, Optional, Required } from '../validation/validators.js';

export class UsageQuery {
  @ApiPropertyOptional({ example: '2026-11-01', description: 'Start (inclusive): a date (UTC midnight) or an RFC 3339 time. Default: the start of the current UTC month.' })
  @Optional()
  @IsText(1, 64)
  from?: string;

  @ApiPropertyOptional({ example: '2026-12-01', description: 'End (exclusive): a date or an RFC 3339 time. Default: now.' })
  @Optional()
  @IsText(1, 64)
  to?: string;

  @ApiPropertyOptional({ example: 'team,flavor,day', description: 'Comma-separated: team, user (who submitted the jobs), flavor, and at most one of day, month (UTC). Default: team,flavor.' })
  @Optional()
  @IsText(0, 64)
  groupBy?: string;

  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (members: one of theirs).' })
  @Optional()
  @IsName()
  team?: string;
}

export const BUDGET_UNITS = ['accelerator-hours', 'currency'] as const;
export const BUDGET_ACTIONS = ['warn', 'block', 'stop'] as const;
/** What each action does once the budget is used up, to new and to running jobs (docs/adr/0023-budget-stop.md). */
export const BUDGET_ACTION_EFFECTS = {
  warn: { newJobs: 'admitted', runningJobs: 'continue', summary: 'events and metrics only: new jobs are admitted and running jobs go on' },
  block: {
    newJobs: 'wait',
    runningJobs: 'continue',
    summary: 'new jobs wait for the next period; running jobs go on, so the team can go over its limit',
  },
  stop: {
    newJobs: 'wait',
    runningJobs: 'stop',
    summary:
      'new jobs wait for the next period, and running jobs are stopped within one scheduling cycle: requeued after their checkpoint grace period, they resume in the next period',
  },
} as const satisfies Record<(typeof BUDGET_ACTIONS)[number], { newJobs: 'admitted' | 'wait'; runningJobs: 'continue' | 'stop'; summary: string }>;
export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
/** Largest budget limit (accelerator-hours or currency). */
export const BUDGET_MAX = 1e12;

export class PutBudgetDto {
  @ApiProperty({ example: 5000, description: 'Accelerator-hours, or currency (the unit of the flavors\' costPerHour), per period.' })
  @Required()
  @NumberIn(0, BUDGET_MAX)
  limit!: number;

  @ApiProperty({ enum: BUDGET_UNITS, example: 'accelerator-hours' })
  @Required()
  @OneOf(BUDGET_UNITS)
  unit!: (typeof BUDGET_UNITS)[number];

  @ApiProperty({
    enum: BUDGET_ACTIONS,
    example: 'block',
    description:
      'warn: events and metrics at 80% and 100% only. block: also keeps the team\'s new jobs pending (BUDGET_EXHAUSTED) until the next period; ' +
      'its running jobs go on, so its use can go over the limit (the overshoot shows in current.overshoot). stop: as block, and within one ' +
      'scheduling cycle of the budget being used up, the team\'s running and admitted jobs that count against it are stopped: requeued to ' +
      'PENDING (not failed) with BUDGET_EXHAUSTED until the next period, each evicted with its checkpoint grace period like a preemption, ' +
      'a job that checkpoints resuming from its checkpoint; raising the limit or deleting the budget lets them run again.',
  })
  @Required()
  @OneOf(BUDGET_ACTIONS)
  onExhausted!: (typeof BUDGET_ACTIONS)[number];
}
