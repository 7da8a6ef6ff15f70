import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { ConsoleService } from './console.service.js';
import { PlacementView } from './console.view.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/jobs')
export class PlacementController {
  constructor(@Inject(ConsoleService) private readonly console: ConsoleService) {}

  @Get(':id/placement')
  @ApiOperation({
    summary: "Show where a job's replicas run",
    description:
      "Per replica: the node, its accelerators there and the node's topology (zone, block, domain, TPU shape); `items` is empty unless the job " +
      "holds an allocation. Admins, and members of the job's team (403 otherwise); 404 for an unknown job.",
  })
  @Answers(PlacementView)
  placement(@Param('id') id: string, @Caller() caller: Principal): Promise<PlacementView> {
    return this.console.placement(id, caller);
  }
}
