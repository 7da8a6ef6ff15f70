import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { type ActiveState, QueueRepository } from '#db';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { jobView } from '../jobs/job.view.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { QueueView } from './console.view.js';
import { QueueQuery } from './console.dto.js';
import { visibleTeams } from './scope.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/queue')
export class QueueController {
  constructor(@Inject(QueueRepository) private readonly queue: QueueRepository) {}

  /**
   * Active jobs: PENDING, or some of ADMITTED / BINDING / RUNNING. PENDING in the order the scheduler will consider them (its last cycle's
   * positions; jobs it has not seen yet last), each with `pending.position`, reason and estimated start;
   * ADMITTED / BINDING / RUNNING longest-held first. Members see their teams' jobs only.
   */
  @Get()
  @Answers(QueueView)
  async list(@Query() q: QueueQuery, @Caller() caller: Principal): Promise<QueueView> {
    const limit = q.limit ?? 50;
    const offset = q.offset ?? 0;
    const page = await this.queue.list({
      states: [...new Set((q.state ?? 'PENDING').split(','))] as ActiveState[],
      teams: visibleTeams(caller, q.team),
      team: q.team,
      flavor: q.flavor,
      limit,
      offset,
    });
    return { items: page.items.map((j) => jobView(j)), total: page.total, limit, offset };
  }
}
