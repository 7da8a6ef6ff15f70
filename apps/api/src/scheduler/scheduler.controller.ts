import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../auth/auth.decorators.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { SchedulerService } from './scheduler.service.js';
import { CycleRunView, SchedulerStatusView } from './scheduler.view.js';

@ApiTags('scheduler')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/scheduler')
export class SchedulerController {
  constructor(@Inject(SchedulerService) private readonly scheduler: SchedulerService) {}

  @Get()
  @ApiOperation({
    summary: "Show the scheduler's leader, last cycle and pending count",
    description:
      'The holder of the scheduler lease (null before any) and whether its lease is live, the last cycle (time, duration, admissions, ' +
      'preemptions, pending) and the number of pending jobs. Admins and members.',
  })
  @Answers(SchedulerStatusView)
  status(): Promise<SchedulerStatusView> {
    return this.scheduler.status();
  }

  /** loadSnapshot → runCycle → commitCycle, under the cluster-wide cycle lock. */
  @Post('cycles')
  @AdminOnly()
  @ApiOperation({
    summary: 'Run one scheduling cycle now',
    description:
      'Admin only. Runs one cycle at once and answers 200 with its decisions: admissions, preemptions, moves, reservations and the jobs left ' +
      'pending, with their reasons. Also how tests step the scheduler. 409 when another process holds the scheduler lease.',
  })
  @HttpCode(200)
  @Answers(CycleRunView)
  runCycle(): Promise<CycleRunView> {
    return this.scheduler.runCycle();
  }
}
