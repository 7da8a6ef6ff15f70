import { Controller, Get, Inject, Query } from '@nestjs/common';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { FleetHistoryQuery } from './console.dto.js';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { ConsoleService } from './console.service.js';
import { FleetHistoryView, FleetNodeListView } from './console.view.js';

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

  @Get('history')
  @ApiOperation({
    summary: 'The fleet over time: capacity, allocation, demand and waits by flavor and team',
    description:
      "What the scheduler recorded once a minute (rolled up into hours and days): per flavor, and per team on it, the accelerators offered " +
      "(schedulable nodes; the team's nominal quota), held, and asked by waiting jobs (on their first acceptable flavor), and how long those " +
      'jobs had waited (median, 90th percentile, longest). `resolution` minute, hour (default) or day; oldest first; at most 10,000 rows ' +
      '(400 naming `from` beyond). Everyone reads the flavor rows; members the rows of their own teams (403 when `team` names another).',
  })
  @Answers(FleetHistoryView)
  history(@Query() q: FleetHistoryQuery, @Caller() caller: Principal): Promise<FleetHistoryView> {
    return this.console.fleetHistory(q, caller, new Date());
  }
}
