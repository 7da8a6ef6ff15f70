import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Matches, ValidateIf } from 'class-validator';
import { IsBool, IsNameList, IsText, OneOf, Optional, Required } from '../validation/validators.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export const ROLES = ['admin', 'member', 'executor'] as const;

export class CreateTokenDto {
  @ApiProperty({ example: 'alice', description: 'Who the token is for (shown in audit events).' })
  @Required()
  @IsText(1, 128)
  subject!: string;

  @ApiProperty({ enum: ROLES, example: 'member' })
  @Required()
  @OneOf(ROLES)
  role!: (typeof ROLES)[number];

  @ApiPropertyOptional({ type: [String], example: ['vision'], description: 'Teams a member may act for, or an executor may report for (required, non-empty, for both; must be empty or absent for admins).' })
  @ValidateIf((o: CreateTokenDto) => o.teams !== undefined)
  @IsNameList(0, 256)
  teams?: string[];

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-03-01T00:00:00Z',
    description:
      'When the token stops being accepted (RFC 3339, in the future); from then on it is refused 401 (TOKEN_EXPIRED). ' +
      'null or absent: QM_TOKEN_TTL_DAYS (90) days from now, unless `neverExpires` is true.',
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsText(1, 64)
  @Matches(RFC3339, { message: 'must be an RFC 3339 time such as 2027-03-01T00:00:00Z' })
  expiresAt?: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    default: false,
    description: 'true: the token never expires — only when asked for explicitly, and not together with `expiresAt`. null or absent: false.',
  })
  @Optional()
  @IsBool()
  neverExpires?: boolean | null;
}
