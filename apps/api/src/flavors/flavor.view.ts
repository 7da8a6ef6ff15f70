import { ApiProperty } from '@nestjs/swagger';
import { topologyLabelsOf } from '#core';
import type { FlavorRecord } from '#db';
import { MapProperty, TimeProperty } from '../response.doc.js';
import { FLAVOR_KINDS, type FlavorKindName } from './flavor.dto.js';

export class TopologyLabelsView {
  @ApiProperty({ example: 'topology.kubernetes.io/zone' })
  zone!: string;
  @ApiProperty({ example: 'cloud.google.com/gce-topology-block' })
  block!: string;
  @ApiProperty({ example: 'nvidia.com/gpu.clique' })
  domain!: string;
  @ApiProperty({ required: false, example: 'cloud.google.com/gke-tpu-topology' })
  tpuShape?: string;
}

/** A flavor as the API shows it (topology labels with the kind's defaults filled in). */
export class FlavorView {
  @ApiProperty({ example: 'h100-80gb' })
  name!: string;
  @ApiProperty({ enum: FLAVOR_KINDS })
  kind!: FlavorKindName;
  @ApiProperty({ example: 'nvidia.com/gpu' })
  resourceName!: string;
  @MapProperty('string', { example: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } })
  nodeLabels!: Record<string, string>;
  @ApiProperty({ type: () => TopologyLabelsView })
  topologyLabels!: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>>;
  @ApiProperty({ type: Number, nullable: true, example: 80 })
  memoryGiB!: number | null;
  @ApiProperty({ example: 2 })
  relativeSpeed!: number;
  @ApiProperty({ example: 4 })
  costPerHour!: number;
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

export class FlavorListView {
  @ApiProperty({ type: [FlavorView] })
  items!: FlavorView[];
}

export const flavorView = (f: FlavorRecord): FlavorView => ({
  name: f.name,
  kind: f.kind,
  resourceName: f.resourceName,
  nodeLabels: f.nodeLabels,
  topologyLabels: topologyLabelsOf(f.kind, f.topologyLabels),
  memoryGiB: f.memoryGiB,
  relativeSpeed: f.relativeSpeed,
  costPerHour: f.costPerHour,
  createdAt: f.createdAt.toISOString(),
  updatedAt: f.updatedAt.toISOString(),
});
