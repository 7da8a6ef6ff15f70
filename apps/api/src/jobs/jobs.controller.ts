import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Caller, ExecutorAllowed } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { CreateJobDto, JobProgressDto, JobStatusDto, ListJobsQuery } from './job.dto.js';
import { JobDetailView, JobEventListView, JobListView, jobView } from './job.view.js';
import { JobsService } from './jobs.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('jobs')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/jobs')
export class JobsController {
  constructor(@Inject(JobsService) private readonly jobs: JobsService) {}

  /** 201 with the new job; 200 with the same job when the Idempotency-Key and body repeat. */
  @Post()
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body → 200 with the same job; same key, other body → 409.' })
  @Answers(JobDetailView, 201, 200)
  async submit(
    @Body() dto: CreateJobDto,
    @Caller() caller: Principal,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JobDetailView> {
    const { created, job } = await this.jobs.submit(dto, caller, idempotencyKey);
    void reply.status(created ? 201 : 200);
    return job;
  }

  @Get()
  @ExecutorAllowed()
  @Answers(JobListView)
  list(@Query() query: ListJobsQuery, @Caller() caller: Principal): Promise<JobListView> {
    return this.jobs.list(query, caller);
  }

  @Get(':id')
  @ExecutorAllowed()
  @Answers(JobDetailView)
  async get(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return jobView(await this.jobs.get(id, caller));
  }

  @Get(':id/events')
  @ExecutorAllowed()
  @Answers(JobEventListView)
  events(@Param('id') id: string, @Caller() caller: Principal): Promise<JobEventListView> {
    return this.jobs.events(id, caller);
  }

  /** Cancels the job (its pods are deleted by the workers where bound). Idempotent. */
  @Delete(':id')
  @Answers(JobDetailView)
  cancel(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.cancel(id, caller);
  }

  /**
   * For executors outside Kubernetes: RUNNING / SUCCEEDED / FAILED, checked against the lifecycle table.
   * Admins, and executor tokens of the job's team. Reporting the state the job is already in answers 200.
   */
  @Post(':id/status')
  @ExecutorAllowed()
  @HttpCode(200)
  @Answers(JobDetailView)
  report(@Param('id') id: string, @Body() dto: JobStatusDto, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.report(id, dto, caller);
  }

  /**
   * For executors: the job's last checkpoint and the fraction of its work done then, while it holds
   * accelerators or, preempted or moved, within its checkpoint grace period. Preemption picks
   * victims that lose the least work since their last checkpoint; a requeued job expects only the rest.
   */
  @Post(':id/progress')
  @ExecutorAllowed()
  @HttpCode(200)
  @Answers(JobDetailView)
  progress(@Param('id') id: string, @Body() dto: JobProgressDto, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.progress(id, dto, caller);
  }
}
