import { ApiProperty } from '@nestjs/swagger';
import type { NodeRecord } from '#db';
import { MapProperty, TimeProperty } from '../response.doc.js';

export class NodeTopologyView {
  @ApiProperty({ required: false, example: 'us-east-1a' })
  zone?: string;
  @ApiProperty({ required: false, example: 'rack-7' })
  block?: string;
  @ApiProperty({ required: false, example: 'nvl72-3' })
  domain?: string;
  @ApiProperty({ required: false, example: '4x4' })
  tpuShape?: string;
}

/** Capacity held by pods the scheduler does not manage, counted as used. */
export class ExternalUseView {
  @ApiProperty()
  accelerators!: number;
  @ApiProperty()
  cpuMillis!: number;
  @ApiProperty()
  memoryMiB!: number;
}

export class NodeView {
  @ApiProperty({ example: 'gpu-1' })
  name!: string;
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ example: 8 })
  accelerators!: number;
  @ApiProperty({ example: 96000 })
  cpuMillis!: number;
  @ApiProperty({ example: 1048576 })
  memoryMiB!: number;
  @ApiProperty({ type: () => NodeTopologyView })
  topology!: NodeTopologyView;
  @MapProperty('string', { example: { 'topology.kubernetes.io/zone': 'us-east-1a' }, description: "Its labels (a Kubernetes Node's, or as given): jobs' nodeSelector matches them." })
  labels!: Record<string, string>;
  @ApiProperty({ description: 'False when cordoned or NotReady: keeps its running work, receives none.' })
  schedulable!: boolean;
  @ApiProperty({ enum: ['api', 'kubernetes'] })
  source!: 'api' | 'kubernetes';
  @ApiProperty({ type: () => ExternalUseView })
  external!: ExternalUseView;
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

/** A job a drain requeued (or would). */
export class DrainedJobView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'llama-ft-7' })
  name!: string;
  @ApiProperty({ example: 'vision' })
  team!: string;
  @ApiProperty({ enum: ['ADMITTED', 'BINDING', 'RUNNING'], description: 'The state it was requeued from.' })
  from!: string;
}

/** What a drain did. */
export class NodeDrainView {
  @ApiProperty({ example: 'gpu-7' })
  node!: string;
  @ApiProperty({ description: 'The drain cordoned the node (false: it was cordoned already).' })
  cordoned!: boolean;
  @ApiProperty({ type: [DrainedJobView], description: 'The jobs requeued (in a dry run: those that would be).' })
  jobs!: DrainedJobView[];
  @ApiProperty({ description: 'A dry run: nothing changed.' })
  dryRun!: boolean;
}

export class NodeListView {
  @ApiProperty({ type: [NodeView] })
  items!: NodeView[];
}

export const nodeView = (n: NodeRecord): NodeView => ({
  name: n.name,
  flavor: n.flavor,
  accelerators: n.accelerators,
  cpuMillis: n.cpuMillis,
  memoryMiB: n.memoryMiB,
  topology: n.topology,
  labels: n.labels,
  schedulable: n.schedulable,
  source: n.source,
  external: n.external,
  createdAt: n.createdAt.toISOString(),
  updatedAt: n.updatedAt.toISOString(),
});
