import { ApiProperty, PickType } from '@nestjs/swagger';
import { nodeTopology, type FleetNode } from '#db';
import { JobEventView, JobView } from '../jobs/job.view.js';
import { NodeView } from '../nodes/node.view.js';
import { MapProperty, TimeProperty } from '../response.doc.js';

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

export class FleetHistoryPointView {
  @TimeProperty({ description: 'Start of the minute, hour or day (UTC).' })
  at!: string;
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ type: String, nullable: true, example: 'vision', description: 'null: the whole flavor.' })
  team!: string | null;
  @ApiProperty({ description: "Accelerators offered: the flavor's schedulable nodes (flavor rows), the team's nominal quota (team rows). Averaged over the row's minutes." })
  capacity!: number;
  @ApiProperty({ description: 'Accelerators held by admitted, binding and running jobs (average).' })
  allocated!: number;
  @ApiProperty({ description: 'Jobs waiting with this flavor as their first choice (average).' })
  pendingJobs!: number;
  @ApiProperty({ description: 'Accelerators those jobs ask (average).' })
  pendingAccelerators!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'How long those jobs had waited: median (seconds; the largest of the minutes). null: none waited.' })
  waitP50Seconds!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: '90th percentile of the waits (seconds; the largest of the minutes).' })
  waitP90Seconds!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'The longest wait (seconds).' })
  waitMaxSeconds!: number | null;
  @ApiProperty({ description: 'Minute samples the row averages (1 for a minute row).' })
  samples!: number;
}

export class FleetHistoryView {
  @ApiProperty({ enum: ['minute', 'hour', 'day'] })
  resolution!: string;
  @TimeProperty()
  from!: string;
  @TimeProperty()
  to!: string;
  @ApiProperty({ type: [FleetHistoryPointView], description: 'Oldest first, then by flavor and team (the flavor row first).' })
  items!: FleetHistoryPointView[];
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

/** A node as GET /v1/nodes shows it (name, flavor, accelerators, topology) with how much of it is taken. */
export class FleetNodeView extends PickType(NodeView, ['name', 'flavor', 'accelerators', 'topology'] as const) {
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

/** An audit entry: an event with the team it concerns. */
export class AuditEntryView extends JobEventView {
  @ApiProperty({ type: String, nullable: true })
  team!: string | null;
}

export class AuditView {
  @ApiProperty({ type: [AuditEntryView] })
  items!: AuditEntryView[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `before` for the next page; null on the last.' })
  nextBefore!: string | null;
}

export const fleetNodeView = (n: FleetNode): FleetNodeView => ({
  name: n.name,
  flavor: n.flavor,
  topology: nodeTopology(n),
  accelerators: n.accelerators,
  allocated: n.allocated,
  external: n.external,
  free: Math.max(0, n.accelerators - n.allocated - n.external),
  jobs: n.jobs,
  schedulable: n.schedulable,
});
