import { ApiProperty } from '@nestjs/swagger';
import type { FleetNode } from '#db';
import { JobView } from '../jobs/job.view.js';
import { MapProperty, ObjectProperty, TimeProperty } from '../response.doc.js';

export class FlavorCapacityView {
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ example: 'nvidia-gpu' })
  kind!: string;
  @ApiProperty()
  nodes!: number;
  @ApiProperty({ description: 'Accelerators on its nodes.' })
  total!: number;
  @ApiProperty()
  allocated!: number;
  @ApiProperty()
  free!: number;
  @ApiProperty({ description: 'On cordoned or NotReady nodes.' })
  unschedulable!: number;
}

export class PendingReasonView {
  @ApiProperty({ type: String, nullable: true, description: 'null: no cycle has looked at these jobs yet.', example: 'QUOTA_EXCEEDED' })
  code!: string | null;
  @ApiProperty()
  jobs!: number;
  @ApiProperty()
  accelerators!: number;
}

export class OverviewView {
  @ApiProperty({ oneOf: [{ type: 'string', example: 'all teams' }, { type: 'array', items: { type: 'string' } }], description: "'all teams' for admins, else the caller's teams." })
  scope!: string | string[];
  @ApiProperty({ type: [FlavorCapacityView] })
  flavors!: FlavorCapacityView[];
  @ApiProperty({ type: [PendingReasonView] })
  pendingByReason!: PendingReasonView[];
  @MapProperty('number', { description: 'Active jobs per state.', example: { PENDING: 3, RUNNING: 2 } })
  jobs!: Record<string, number>;
}

export class CycleBucketView {
  @TimeProperty()
  at!: string;
  @ApiProperty()
  cycles!: number;
  @ApiProperty()
  admitted!: number;
  @ApiProperty()
  preempted!: number;
  @ApiProperty({ description: 'Longest cycle in the bucket, ms (0 when there was none).' })
  maxDurationMs!: number;
}

export class HistoryView {
  @TimeProperty()
  since!: string;
  @TimeProperty()
  until!: string;
  @ApiProperty()
  stepMinutes!: number;
  @ApiProperty({ type: [CycleBucketView] })
  buckets!: CycleBucketView[];
}

export class QueueView {
  @ApiProperty({ type: [JobView] })
  items!: JobView[];
  @ApiProperty()
  total!: number;
  @ApiProperty()
  limit!: number;
  @ApiProperty()
  offset!: number;
}

export class FleetTopologyView {
  @ApiProperty({ required: false })
  zone?: string;
  @ApiProperty({ required: false })
  block?: string;
  @ApiProperty({ required: false })
  domain?: string;
  @ApiProperty({ required: false })
  tpuShape?: string;
}

export class FleetNodeView {
  @ApiProperty({ example: 'gpu-1' })
  name!: string;
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ type: () => FleetTopologyView })
  topology!: FleetTopologyView;
  @ApiProperty()
  accelerators!: number;
  @ApiProperty({ description: "Held by Quartermaster's allocations." })
  allocated!: number;
  @ApiProperty({ description: 'Held by pods Quartermaster does not manage.' })
  external!: number;
  @ApiProperty()
  free!: number;
  @ApiProperty({ description: 'Jobs holding an allocation on it.' })
  jobs!: number;
  @ApiProperty()
  schedulable!: boolean;
}

export class FleetNodeListView {
  @ApiProperty({ type: [FleetNodeView] })
  items!: FleetNodeView[];
}

export class PlacementItemView {
  @ApiProperty()
  replica!: number;
  @ApiProperty({ example: 'gpu-1' })
  node!: string;
  @ApiProperty()
  accelerators!: number;
  @ApiProperty({ type: String, nullable: true })
  zone!: string | null;
  @ApiProperty({ type: String, nullable: true })
  block!: string | null;
  @ApiProperty({ type: String, nullable: true })
  domain!: string | null;
  @ApiProperty({ type: String, nullable: true })
  tpuShape!: string | null;
}

export class PlacementView {
  @ApiProperty({ type: String, nullable: true, description: 'Admitted flavor.' })
  flavor!: string | null;
  @ApiProperty({ type: [PlacementItemView] })
  items!: PlacementItemView[];
}

export class AuditEntryView {
  @ApiProperty({ example: '42' })
  id!: string;
  @TimeProperty()
  at!: string;
  @ApiProperty({ example: 'quota.updated' })
  kind!: string;
  @ApiProperty({ type: String, nullable: true })
  team!: string | null;
  @ApiProperty()
  actor!: string;
  @ApiProperty()
  message!: string;
  @ObjectProperty({ description: 'before / after and what else the change carries.' })
  data!: unknown;
}

export class AuditView {
  @ApiProperty({ type: [AuditEntryView] })
  items!: AuditEntryView[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `before` for the next page; null on the last.' })
  nextBefore!: string | null;
}

export const fleetNodeView = (n: FleetNode): FleetNodeView => {
  const topology: FleetTopologyView = {};
  if (n.zone !== null) topology.zone = n.zone;
  if (n.block !== null) topology.block = n.block;
  if (n.domain !== null) topology.domain = n.domain;
  if (n.tpuShape !== null) topology.tpuShape = n.tpuShape;
  return {
    name: n.name,
    flavor: n.flavor,
    topology,
    accelerators: n.accelerators,
    allocated: n.allocated,
    external: n.external,
    free: Math.max(0, n.accelerators - n.allocated - n.external),
    jobs: n.jobs,
    schedulable: n.schedulable,
  };
};
