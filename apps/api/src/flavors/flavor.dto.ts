import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, Matches, ValidateNested } from 'class-validator';
import { MapProperty } from '../response.doc.js';
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

const TopologyLabelKey = (example: string, description: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ example, description }),
    Optional(),
    IsText(1, 317),
    Matches(LABEL_KEY, { message: 'must be a Kubernetes label key (optional DNS prefix and /, then ≤ 63 alphanumerics, -, _ or .)' }),
  );

/** The node label key each topology level is read from; a level left out takes the kind's default. */
export class TopologyLabelsDto {
  @TopologyLabelKey('topology.kubernetes.io/zone', 'Zone label.')
  zone?: string;

  @TopologyLabelKey('cloud.google.com/gce-topology-block', 'Block / rack label.')
  block?: string;

  @TopologyLabelKey('cloud.google.com/gke-nodepool', 'NVLink domain or TPU slice label.')
  domain?: string;

  @TopologyLabelKey('cloud.google.com/gke-tpu-topology', "TPU slice shape label (values like '2x4').")
  tpuShape?: string;
}

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

  @MapProperty('string', { required: false, example: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } })
  @Optional()
  @IsStringMap({ maxEntries: 32, keyPattern: LABEL_KEY, keyHint: 'is not a Kubernetes label key', maxKeyLength: 317, maxValueLength: 63, valuePattern: LABEL_VALUE })
  nodeLabels?: Record<string, string>;

  @ApiPropertyOptional({
    type: () => TopologyLabelsDto,
    description:
      "Node label keys the nodes' topology is read from. Defaults by kind: zone topology.kubernetes.io/zone everywhere; " +
      'nvidia-gpu block quartermaster.io/block, domain nvidia.com/gpu.clique; google-tpu block cloud.google.com/gce-topology-block, ' +
      'domain cloud.google.com/gke-nodepool (a multi-host slice is one node pool), tpuShape cloud.google.com/gke-tpu-topology; ' +
      'aws-trainium block topology.k8s.aws/network-node-layer-2, domain topology.k8s.aws/network-node-layer-3; ' +
      'intel-gaudi block quartermaster.io/block, domain quartermaster.io/domain.',
  })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => TopologyLabelsDto)
  topologyLabels?: TopologyLabelsDto;

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
