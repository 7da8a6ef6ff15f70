import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CycleHistoryRepository, FleetRepository } from '#db';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { HistoryView, OverviewView } from './console.view.js';
import { validationFailed } from '../validation/validation.pipe.js';
import { HistoryQuery } from './console.dto.js';
import { visibleTeams } from './scope.js';

const MAX_BUCKETS = 500;

/** What the cluster is doing, in one read: capacity per flavor, and the caller's queue by reason and state. */
@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/overview')
export class OverviewController {
  constructor(
    @Inject(FleetRepository) private readonly fleet: FleetRepository,
    @Inject(CycleHistoryRepository) private readonly cycles: CycleHistoryRepository,
  ) {}

  /**
   * Accelerators per flavor (allocated / free / unschedulable, cluster-wide, as GET /v1/nodes is), and
   * pending jobs by reason code and active jobs by state — of every team for admins, of their own teams
   * for members.
   */
  @Get()
  @Answers(OverviewView)
  async overview(@Caller() caller: Principal): Promise<OverviewView> {
    const teams = visibleTeams(caller);
    const [flavors, pendingByReason, jobs] = await Promise.all([
      this.fleet.capacity(),
      this.fleet.pendingByReason(teams),
      this.fleet.activeJobs(teams),
    ]);
    return {
      scope: teams === undefined ? 'all teams' : [...teams],
      flavors,
      pendingByReason,
      jobs: Object.fromEntries(jobs.map((j) => [j.state, j.jobs])),
    };
  }

  /** Committed scheduling cycles, admissions and preemptions per time bucket (cluster-wide), oldest first. */
  @Get('history')
  @Answers(HistoryView)
  async history(@Query() q: HistoryQuery): Promise<HistoryView> {
    const hours = q.hours ?? 6;
    const stepMinutes = q.stepMinutes ?? 15;
    if ((hours * 60) / stepMinutes > MAX_BUCKETS) {
      throw validationFailed([
        {
          field: 'stepMinutes',
          message: `makes more than ${MAX_BUCKETS} buckets over ${hours} h; use at least ${Math.ceil((hours * 60) / MAX_BUCKETS)}`,
        },
      ]);
    }
    const until = new Date();
    const since = new Date(until.getTime() - hours * 3_600_000);
    const buckets = await this.cycles.buckets(since, until, stepMinutes * 60);
    return {
      since: since.toISOString(),
      until: until.toISOString(),
      stepMinutes,
      buckets: buckets.map((b) => ({ ...b, at: b.at.toISOString() })),
    };
  }
}
