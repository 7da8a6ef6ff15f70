import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Optional } from '../validation/validators.js';

export class PutCohortDto {
  @ApiPropertyOptional({ example: 'research teams that lend each other idle H100s' })
  @Optional()
  @IsString({ message: 'must be a string' })
  @MaxLength(1024, { message: 'must have at most 1024 characters' })
  description?: string;
}
