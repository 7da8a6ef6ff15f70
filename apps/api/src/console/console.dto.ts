import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { Matches } from 'class-validator';
import { HISTORY_RESOLUTIONS, type HistoryResolution } from '#db';
import { IntIn, IsName, IsText, OneOf, Optional } from '../validation/validators.js';

const QUEUE_STATES = /^(PENDING|(ADMITTED|BINDING|RUNNING)(,(ADMITTED|BINDING|RUNNING)){0,2})$/;

/** GET /v1/queue */
export class QueueQuery {
  @ApiPropertyOptional({
    default: 'PENDING',
    description:
      'PENDING, or a comma-separated list of ADMITTED, BINDING, RUNNING (jobs holding accelerators).',
    example: 'ADMITTED,BINDING,RUNNING',
  })
  @Optional()
  @Matches(QUEUE_STATES, {
    message: 'must be PENDING, or a comma-separated list of ADMITTED, BINDING, RUNNING',
  })
  state?: string;

  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (members: one of theirs).' })
  @Optional()
  @IsName()
  team?: string;

  @ApiPropertyOptional({
    example: 'h100-80gb',
    description: 'PENDING: jobs that accept this flavor; otherwise jobs admitted onto it.',
  })
  @Optional()
  @IsName()
  flavor?: string;

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 500 })
  @Optional()
  @Type(() => Number)
  @IntIn(1, 500)
  limit?: number;

  @ApiPropertyOptional({ default: 0, minimum: 0, maximum: 1_000_000 })
  @Optional()
  @Type(() => Number)
  @IntIn(0, 1_000_000)
  offset?: number;
}

/** GET /v1/overview/history */
export class HistoryQuery {
  @ApiPropertyOptional({ default: 6, minimum: 1, maximum: 168, description: 'How far back, in hours.' })
  @Optional()
  @Type(() => Number)
  @IntIn(1, 168)
  hours?: number;

  @ApiPropertyOptional({
    default: 15,
    minimum: 1,
    maximum: 1440,
    description: 'Bucket width, in minutes (at most 500 buckets).',
  })
  @Optional()
  @Type(() => Number)
  @IntIn(1, 1440)
  stepMinutes?: number;
}

/** GET /v1/fleet/history */
export class FleetHistoryQuery {
  @ApiPropertyOptional({ enum: HISTORY_RESOLUTIONS, default: 'hour', description: 'One row per minute (kept 24 h by default), hour (31 days) or day (2 years).' })
  @Optional()
  @OneOf(HISTORY_RESOLUTIONS)
  resolution?: HistoryResolution;

  @ApiPropertyOptional({ example: '2026-12-01', description: 'Start (inclusive): a date (UTC midnight) or an RFC 3339 time. Default: 2 h (minute), 7 days (hour) or 90 days (day) before `to`.' })
  @Optional()
  @IsText(1, 64)
  from?: string;

  @ApiPropertyOptional({ example: '2026-12-07T12:00:00Z', description: 'End (exclusive). Default: now.' })
  @Optional()
  @IsText(1, 64)
  to?: string;

  @ApiPropertyOptional({ example: 'h100-80gb', description: 'Only this flavor.' })
  @Optional()
  @IsName()
  flavor?: string;

  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (and the flavor rows). Members: one of theirs.' })
  @Optional()
  @IsName()
  team?: string;
}

/** GET /v1/audit */
export class AuditQuery {
  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (members: one of theirs).' })
  @Optional()
  @IsName()
  team?: string;

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @Optional()
  @Type(() => Number)
  @IntIn(1, 200)
  limit?: number;

  @ApiPropertyOptional({ example: '1042', description: 'Only entries older than this id (the previous page’s nextBefore).' })
  @Optional()
  @Matches(/^[1-9][0-9]{0,17}$/, { message: 'must be an event id (a positive integer)' })
  before?: string;
}
