import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { IsBool, IntIn, IsText, Optional, Required } from '../validation/validators.js';

/** Job priorities lie in ±1,000,000 (the value of a class too). */
export const PRIORITY_RANGE = { min: -1_000_000, max: 1_000_000 } as const;

export class PutPriorityClassDto {
  @ApiProperty({ example: 1000, minimum: PRIORITY_RANGE.min, maximum: PRIORITY_RANGE.max, description: "The jobs' priority: higher goes first, and may preempt lower under the team's rules." })
  @Required()
  @IntIn(PRIORITY_RANGE.min, PRIORITY_RANGE.max)
  value!: number;

  @ApiPropertyOptional({ example: 'deadline-bound training; infra lead approval', default: '' })
  @Optional()
  @IsText(0, 1024)
  description?: string;

  @ApiPropertyOptional({ default: false, description: 'The class of jobs that name none (at most one: making this one the default takes it from the other).' })
  @Optional()
  @IsBool()
  default?: boolean;
}
