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

  @ApiPropertyOptional({ example: 'team,flavor,day', description: 'Comma-separated: team, flavor, and at most one of day, month (UTC). Default: team,flavor.' })
  @Optional()
  @IsText(0, 64)
  groupBy?: string;

  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (members: one of theirs).' })
  @Optional()
  @IsName()
  team?: string;
}

export const BUDGET_UNITS = ['accelerator-hours', 'currency'] as const;
export const BUDGET_ACTIONS = ['warn', 'block'] as const;
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

  @ApiProperty({ enum: BUDGET_ACTIONS, example: 'block', description: 'warn: events and metrics at 80% and 100%; block: also keeps new jobs pending (BUDGET_EXHAUSTED) until the next period.' })
  @Required()
  @OneOf(BUDGET_ACTIONS)
  onExhausted!: (typeof BUDGET_ACTIONS)[number];
}
