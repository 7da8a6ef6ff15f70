import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { ConsoleService } from './console.service.js';
import { FleetNodeListView } from './console.view.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/fleet')
export class FleetController {
  constructor(@Inject(ConsoleService) private readonly console: ConsoleService) {}

  /**
   * Every node with its allocation (ours, other schedulers' pods, free) ordered by flavor, zone, block,
   * domain and name: what a heat map of fragmentation needs. Readable by every token, as GET /v1/nodes.
   */
  @Get('nodes')
  @Answers(FleetNodeListView)
  nodes(): Promise<FleetNodeListView> {
    return this.console.fleetNodes();
  }
}
