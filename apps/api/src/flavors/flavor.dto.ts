import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { IntIn, IsStringMap, IsText, NumberIn, OneOf, Optional, Required } from '../validation/validators.js';

export const FLAVOR_KINDS = ['nvidia-gpu', 'aws-trainium', 'intel-gaudi', 'google-tpu'] as const;
export type FlavorKindName = (typeof FLAVOR_KINDS)[number];

/** The extended resource each kind is counted in when `resourceName` is omitted. */
export const DEFAULT_RESOURCE_NAME: Record<FlavorKindName, string> = {
  'nvidia-gpu': 'nvidia.com/gpu',
  'aws-trainium': 'aws.amazon.com/neuron',
  'intel-gaudi': 'habana.ai/gaudi',
  'google-tpu': 'google.com/tpu',
};

/** Kubernetes label key: optional DNS prefix + '/' + name of ≤ 63 characters. */
export const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

export class PutFlavorDto {
  @ApiProperty({ enum: FLAVOR_KINDS, example: 'nvidia-gpu' })
  @Required()
  @OneOf(FLAVOR_KINDS)
  kind!: FlavorKindName;

  @ApiPropertyOptional({ example: 'nvidia.com/gpu', description: 'Extended resource name; defaults by kind.' })
  @Optional()
  @IsText(1, 253)
  @Matches(/^[a-z0-9.-]+\/[A-Za-z0-9._-]+$/, { message: "must look like 'vendor.example.com/name'" })
  resourceName?: string;

  @ApiPropertyOptional({ example: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } })
  @Optional()
  @IsStringMap({ maxEntries: 32, keyPattern: LABEL_KEY, keyHint: 'is not a Kubernetes label key', maxKeyLength: 317, maxValueLength: 63, valuePattern: LABEL_VALUE })
  nodeLabels?: Record<string, string>;

  @ApiPropertyOptional({ example: 80 })
  @Optional()
  @IntIn(1, 4096)
  memoryGiB?: number;

  @ApiPropertyOptional({ example: 1.0, description: 'Throughput relative to a reference accelerator (default 1).' })
  @Optional()
  @NumberIn(0.001, 1000)
  relativeSpeed?: number;

  @ApiPropertyOptional({ example: 4.0, description: 'Hourly cost of one accelerator (default 0).' })
  @Optional()
  @NumberIn(0, 1_000_000)
  costPerHour?: number;
}
