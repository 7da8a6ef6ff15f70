import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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

  @Get('nodes')
  @ApiOperation({
    summary: 'List nodes with their allocation, for a fragmentation map',
    description:
      "Every node with its allocation (accelerators held by Quartermaster's jobs, by other schedulers' pods, and free), ordered by flavor, zone, " +
      'block, domain and name: what a heat map of fragmentation needs. Admins and members, as GET /v1/nodes.',
  })
  @Answers(FleetNodeListView)
  nodes(): Promise<FleetNodeListView> {
    return this.console.fleetNodes();
  }
}
