import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Caller, ExecutorAllowed } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { CancelJobsDto, CreateJobDto, JobPriorityDto, JobProgressDto, JobStatusDto, ListJobsQuery } from './job.dto.js';
import { JobCancellationsView, JobDetailView, JobEventListView, JobListView, jobView } from './job.view.js';
import { JobsService } from './jobs.service.js';
import { ApiLimitProblems, ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('jobs')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/jobs')
export class JobsController {
  constructor(@Inject(JobsService) private readonly jobs: JobsService) {}

  @Post()
  @ApiOperation({
    summary: 'Submit a job',
    description:
      'Queues a gang of `replicas` replicas (at least `minReplicas` for an elastic gang) of `acceleratorsPerReplica` accelerators each, of one ' +
      "of the listed flavors; the scheduler admits the gang as a whole when quota and capacity allow. Admins, and members of the job's team (403 otherwise). " +
      '400 naming `template` for a template larger than QM_MAX_TEMPLATE_BYTES (64 KiB by default) as JSON; nothing is stored. ' +
      '201 with the new job; with an Idempotency-Key (1 to 255 visible ASCII characters, scoped to the token), the same key and body again answer 200 ' +
      'with the same job, the same key with another body 409. 422 naming each unknown team or flavor; 503 when the API is overloaded (retry shortly). ' +
      "429 (with Retry-After; nothing created) when the team already has its `limits.maxPendingJobs` pending jobs or submits faster than its `limits.submissionsPerSecond`.",
  })
  @ApiLimitProblems()
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
  @ApiOperation({
    summary: 'List jobs, newest first',
    description:
      "Jobs newest first, filtered by team, state and kind, `limit` (default 50, at most 500) per page, without their pod templates (GET /v1/jobs/{id} " +
      "has them): pass the answer's `nextCursor` as `cursor` for the next " +
      "page (null on the last). Admins see every team's jobs; members and executor tokens their own teams' (403 when `team` names another).",
  })
  @Answers(JobListView)
  list(@Query() query: ListJobsQuery, @Caller() caller: Principal): Promise<JobListView> {
    return this.jobs.list(query, caller);
  }

  @Post('cancellations')
  @HttpCode(200)
  @ApiOperation({
    summary: "Cancel a team's jobs by filter",
    description:
      "Cancels, oldest first, the team's jobs in `states` (default every unfinished state), of `name` and submitted by `createdBy` when given — at most " +
      '`limit` (default and at most 1000) per call; `more` says whether others matched. Each is cancelled as DELETE /v1/jobs/{id} does (its ' +
      "accelerators released, its pods deleted where bound); a job that finished meanwhile is left as it is. Admins, and members of the team (403 otherwise). " +
      '200 with the jobs cancelled (none: an empty list); `dryRun: true` answers which would be, changing nothing. Each call that cancels is one ' +
      '`jobs.cancelled` entry in the audit trail (GET /v1/audit): by whom, the filter, the jobs.',
  })
  @Answers(JobCancellationsView)
  cancelMatching(@Body() dto: CancelJobsDto, @Caller() caller: Principal): Promise<JobCancellationsView> {
    return this.jobs.cancelMatching(dto, caller);
  }

  @Get(':id')
  @ExecutorAllowed()
  @ApiOperation({
    summary: 'Get a job with its template, allocation and transitions',
    description:
      'The job, its pod template, its state and pending reason, its allocation (node and accelerators per replica) and its state transitions. ' +
      "Admins, and members and executor tokens of the job's team (403 otherwise); 404 for an unknown job.",
  })
  @Answers(JobDetailView)
  async get(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return jobView(await this.jobs.get(id, caller));
  }

  @Get(':id/events')
  @ExecutorAllowed()
  @ApiOperation({
    summary: "List a job's events, oldest first",
    description:
      'What happened to the job (state changes, changes of its pending reason, preemptions, moves), oldest first, each with its actor, message and data. ' +
      "Admins, and members and executor tokens of the job's team (403 otherwise); 404 for an unknown job.",
  })
  @Answers(JobEventListView)
  events(@Param('id') id: string, @Caller() caller: Principal): Promise<JobEventListView> {
    return this.jobs.events(id, caller);
  }

  @Delete(':id')
  @ApiOperation({
    summary: 'Cancel a job',
    description:
      'Moves the job to CANCELLED and releases the accelerators it holds; where it was bound, the workers delete its pods. Idempotent: a cancelled job ' +
      "is answered unchanged (200). Admins, and members of the job's team (403 otherwise); 409 for a job that already succeeded or failed, 404 for an unknown job.",
  })
  @Answers(JobDetailView)
  cancel(@Param('id') id: string, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.cancel(id, caller);
  }

  @Post(':id/status')
  @ExecutorAllowed()
  @HttpCode(200)
  @ApiOperation({
    summary: "Report a job's state from its executor",
    description:
      'For executors outside Kubernetes: RUNNING, SUCCEEDED or FAILED, checked against the lifecycle table (409 for a change it does not allow). ' +
      "Admins, and executor tokens of the job's team (403 for members and other teams). Reporting the state the job is already in answers 200 unchanged; 404 for an unknown job.",
  })
  @Answers(JobDetailView)
  report(@Param('id') id: string, @Body() dto: JobStatusDto, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.report(id, dto, caller);
  }

  @Post(':id/priority')
  @HttpCode(200)
  @ApiOperation({
    summary: "Change a pending job's priority",
    description:
      "A PENDING job's priority, chosen as at submission: a priorityClass within the team's maxPriorityClass (members; 403 naming the allowed classes above it, " +
      '422 for an unknown class), or a numeric priority (admins only; 400 from a member). Audited as the event job.priority-changed with both values. ' +
      "Admins, and members of the job's team; 409 for a job that is not PENDING, 404 for an unknown job; 200 unchanged when it already has that priority.",
  })
  @Answers(JobDetailView)
  changePriority(@Param('id') id: string, @Body() dto: JobPriorityDto, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.changePriority(id, dto, caller);
  }

  @Post(':id/progress')
  @ExecutorAllowed()
  @HttpCode(200)
  @ApiOperation({
    summary: "Report a job's last checkpoint and progress",
    description:
      "For executors: the job's last checkpoint and the fraction of its work done then (at least one of the two), while it holds accelerators or, " +
      'preempted or moved, within its checkpoint grace period (409 otherwise). Preemption picks victims that lose the least work since their last ' +
      "checkpoint; a requeued job expects only the rest. Admins, and executor tokens of the job's team; 404 for an unknown job.",
  })
  @Answers(JobDetailView)
  progress(@Param('id') id: string, @Body() dto: JobProgressDto, @Caller() caller: Principal): Promise<JobDetailView> {
    return this.jobs.progress(id, dto, caller);
  }
}
