import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { FleetRepository, type FleetNode } from '#db';
import { ApiProblems } from '../problem.doc.js';

export const fleetNodeView = (n: FleetNode): unknown => {
  const topology: Record<string, string> = {};
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

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/fleet')
export class FleetController {
  constructor(@Inject(FleetRepository) private readonly fleet: FleetRepository) {}

  /**
   * Every node with its allocation (ours, other schedulers' pods, free) ordered by flavor, zone, block,
   * domain and name: what a heat map of fragmentation needs. Readable by every token, as GET /v1/nodes.
   */
  @Get('nodes')
  async nodes(): Promise<unknown> {
    return { items: (await this.fleet.nodes()).map(fleetNodeView) };
  }
}
