import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
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

  /** Leader, last cycle time and duration, pending count. */
  @Get()
  @Answers(SchedulerStatusView)
  status(): Promise<SchedulerStatusView> {
    return this.scheduler.status();
  }

  /**
   * Runs one cycle now (loadSnapshot → runCycle → commitCycle, under the cluster-wide cycle lock) and
   * returns its decisions. Also how tests step the scheduler.
   */
  @Post('cycles')
  @AdminOnly()
  @HttpCode(200)
  @Answers(CycleRunView)
  runCycle(): Promise<CycleRunView> {
    return this.scheduler.runCycle();
  }
}
