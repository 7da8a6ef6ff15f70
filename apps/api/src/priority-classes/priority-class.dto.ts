import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { JOB_LIMITS } from '../jobs/job.dto.js';
import { IsBool, IntIn, IsText, Optional, Required } from '../validation/validators.js';

/** A class's value is a job priority: the same range. */
const PRIORITY_RANGE = JOB_LIMITS.priority;

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
