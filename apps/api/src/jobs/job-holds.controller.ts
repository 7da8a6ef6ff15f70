import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { HoldJobsDto } from './job.dto.js';
import { JobDetailView, JobHoldsView } from './job.view.js';
import { JobHoldsService } from './job-holds.service.js';

const WHO = "Admins, and members of the job's team (403 otherwise); another team's job or an unknown one is a 404.";

@ApiTags('jobs')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/jobs')
export class JobHoldsController {
  constructor(@Inject(JobHoldsService) private readonly holds: JobHoldsService) {}

  @Post('holds')
  @HttpCode(200)
  @ApiOperation({
    summary: "Hold a team's pending jobs by filter",
    description:
      "Holds, oldest first, the team's PENDING jobs not yet held, of `name` and submitted by `createdBy` when given — at most `limit` (default and at most 1000) " +
      'per call; `more` says whether others matched. Each is held as POST /v1/jobs/{id}/hold does. Admins, and members of the team (403 otherwise). ' +
      '`dryRun: true` answers which would be, changing nothing. Each call that holds is one `jobs.held` entry in the audit trail (GET /v1/audit).',
  })
  @Answers(JobHoldsView)
  holdMatching(@Body() dto: HoldJobsDto, @Caller() caller: Principal): Promise<JobHoldsView> {
    return this.holds.holdMatching(dto, caller);
  }

  @Post('releases')
  @HttpCode(200)
  @ApiOperation({
    summary: "Release a team's held jobs by filter",
    description:
      "Releases, oldest first, the team's held jobs (a member's call leaves those an admin held), of `name` and submitted by `createdBy` when given — at most " +
      '`limit` per call, `more` for the rest, `dryRun` to only list them. Admins, and members of the team (403 otherwise). Each call that releases is one ' +
      '`jobs.released` entry in the audit trail.',
  })
  @Answers(JobHoldsView)
  releaseMatching(@Body() dto: HoldJobsDto, @Caller() caller: Principal): Promise<JobHoldsView> {
    return this.holds.releaseMatching(dto, caller);
  }

  @Post(':id/hold')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Hold a pending job',
    description:
      'The scheduler passes a held job over (its pending reason is HELD, `hold` says by whom and since when) until it is released; it keeps its place in the ' +
      'queue. Not a state change: it stays PENDING. 409 for a job that is not PENDING; a held job is answered unchanged (200). An event job.held names who. ' +
      WHO,
  })
  @Answers(JobDetailView)
  hold(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.holds.hold(id, caller);
  }

  @Post(':id/release')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Release a held job',
    description:
      'The job is considered again from the next scheduling cycle, in its old place. A job that is not held is answered unchanged (200). A hold by an admin ' +
      'is released by an admin only (403 for a member). An event job.released names who. ' +
      WHO,
  })
  @Answers(JobDetailView)
  release(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.holds.release(id, caller);
  }
}
