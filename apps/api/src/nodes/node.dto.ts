import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, Matches, ValidateNested } from 'class-validator';
import { LABEL_KEY, LABEL_VALUE } from '../flavors/flavor.dto.js';
import { MapProperty } from '../response.doc.js';
import { IntIn, IsBool, IsName, IsStringMap, IsText, Optional, Required } from '../validation/validators.js';

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

  @MapProperty('string', { required: false, example: { 'topology.kubernetes.io/zone': 'us-east-1a' }, description: "The node's labels: jobs whose template has a nodeSelector are placed only on nodes carrying all of its labels." })
  @Optional()
  @IsStringMap({ maxEntries: 64, keyPattern: LABEL_KEY, keyHint: 'is not a Kubernetes label key', maxKeyLength: 317, maxValueLength: 63, valuePattern: LABEL_VALUE })
  labels?: Record<string, string>;
}

/** POST /v1/nodes/{name}/drain. */
export class DrainNodeDto {
  @ApiPropertyOptional({ default: false, description: 'Only answer which jobs would be requeued; nothing changes.' })
  @Optional()
  @IsBool()
  dryRun?: boolean;
}
