import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, Matches, ValidateNested } from 'class-validator';
import { IntIn, IsBool, IsName, IsText, Optional, Required } from '../validation/validators.js';

export const TPU_SHAPE = /^[1-9]\d{0,3}(x[1-9]\d{0,3}){1,2}$/;
const TPU_SHAPE_MESSAGE = "must look like '2x4' or '4x4x4'";

export class NodeTopologyDto {
  @ApiPropertyOptional({ example: 'z1' })
  @Optional()
  @IsText(1, 63)
  zone?: string;

  @ApiPropertyOptional({ example: 'b3' })
  @Optional()
  @IsText(1, 63)
  block?: string;

  @ApiPropertyOptional({ example: 'nvl-7' })
  @Optional()
  @IsText(1, 63)
  domain?: string;

  @ApiPropertyOptional({ example: '2x4' })
  @Optional()
  @IsText(1, 32)
  @Matches(TPU_SHAPE, { message: TPU_SHAPE_MESSAGE })
  tpuShape?: string;
}

export class PutNodeDto {
  @ApiProperty({ example: 'h100-80gb' })
  @Required()
  @IsName()
  flavor!: string;

  @ApiProperty({ example: 8 })
  @Required()
  @IntIn(0, 1024)
  accelerators!: number;

  @ApiProperty({ example: 96000 })
  @Required()
  @IntIn(0, 100_000_000)
  cpuMillis!: number;

  @ApiProperty({ example: 1048576 })
  @Required()
  @IntIn(0, 1_000_000_000)
  memoryMiB!: number;

  @ApiPropertyOptional({ type: () => NodeTopologyDto })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => NodeTopologyDto)
  topology?: NodeTopologyDto;

  @ApiPropertyOptional({ default: true })
  @Optional()
  @IsBool()
  schedulable?: boolean;
}
