import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsNameList, IsText, OneOf, Required } from '../validation/validators.js';

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
}
