import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { HistoryQuery } from './console.dto.js';
import { ConsoleService } from './console.service.js';
import { HistoryView, OverviewView } from './console.view.js';

/** What the cluster is doing, in one read: capacity per flavor, and the caller's queue by reason and state. */
@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/overview')
export class OverviewController {
  constructor(@Inject(ConsoleService) private readonly console: ConsoleService) {}

  @Get()
  @ApiOperation({
    summary: 'Summarize capacity per flavor and jobs by reason and state',
    description:
      'Accelerators per flavor (allocated / free / unschedulable, cluster-wide, as GET /v1/nodes is), and pending jobs by reason code and active ' +
      'jobs by state: of every team for admins, of their own teams for members (`scope` says which).',
  })
  @Answers(OverviewView)
  overview(@Caller() caller: Principal): Promise<OverviewView> {
    return this.console.overview(caller);
  }

  @Get('history')
  @ApiOperation({
    summary: 'Count scheduling cycles, admissions and preemptions per time bucket',
    description:
      'Committed scheduling cycles, admissions and preemptions per bucket of `stepMinutes` (default 15) over the last `hours` (default 6), ' +
      'cluster-wide, oldest first. Admins and members. 400 naming stepMinutes when that would make more than 500 buckets.',
  })
  @Answers(HistoryView)
  history(@Query() q: HistoryQuery): Promise<HistoryView> {
    return this.console.history(q, new Date());
  }
}
