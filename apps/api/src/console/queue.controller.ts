import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
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

  /**
   * Active jobs: PENDING, or some of ADMITTED / BINDING / RUNNING. PENDING in the order the scheduler will consider them (its last cycle's
   * positions; jobs it has not seen yet last), each with `pending.position`, reason and estimated start;
   * ADMITTED / BINDING / RUNNING longest-held first. Members see their teams' jobs only.
   */
  @Get()
  @Answers(QueueView)
  list(@Query() q: QueueQuery, @Caller() caller: Principal): Promise<QueueView> {
    return this.console.queuePage(q, caller);
  }
}
