import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
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

  /** Where each replica runs: node and the node's topology (zone, block, domain, TPU shape). Empty unless the job holds an allocation. */
  @Get(':id/placement')
  @Answers(PlacementView)
  placement(@Param('id') id: string, @Caller() caller: Principal): Promise<PlacementView> {
    return this.console.placement(id, caller);
  }
}
