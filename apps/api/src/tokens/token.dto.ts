import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsNameList, IsText, OneOf, Required } from '../validation/validators.js';

export const ROLES = ['admin', 'member'] as const;

export class CreateTokenDto {
  @ApiProperty({ example: 'alice', description: 'Who the token is for (shown in audit events).' })
  @Required()
  @IsText(1, 128)
  subject!: string;

  @ApiProperty({ enum: ROLES, example: 'member' })
  @Required()
  @OneOf(ROLES)
  role!: 'admin' | 'member';

  @ApiPropertyOptional({ type: [String], example: ['vision'], description: 'Teams a member may act for (required, non-empty, for members; must be empty or absent for admins).' })
  @ValidateIf((o: CreateTokenDto) => o.role === 'member' || o.teams !== undefined)
  @IsNameList(0, 256)
  teams?: string[];
}
