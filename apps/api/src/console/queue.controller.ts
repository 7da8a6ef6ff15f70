import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { QueueQuery } from './console.dto.js';
import { ConsoleService } from './console.service.js';
import { QueueView } from './console.view.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/queue')
export class QueueController {
  constructor(@Inject(ConsoleService) private readonly console: ConsoleService) {}

  @Get()
  @ApiOperation({
    summary: 'List the queue in scheduling order',
    description:
      'Active jobs: PENDING (the default), or some of ADMITTED / BINDING / RUNNING. PENDING jobs come in the order the scheduler will consider them ' +
      "(its last cycle's positions; jobs it has not seen yet last), each with `pending.position`, reason and estimated start; ADMITTED / BINDING / " +
      'RUNNING longest-held first, without their pod templates (GET /v1/jobs/{id} has them). Offset paging (`limit`, `offset`, `total`); admins see every team, members their own teams only (403 when `team` names another).',
  })
  @Answers(QueueView)
  list(@Query() q: QueueQuery, @Caller() caller: Principal): Promise<QueueView> {
    return this.console.queuePage(q, caller);
  }
}
