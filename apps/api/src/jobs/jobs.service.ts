import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AppError, Config, forbidden, LimitExceededError, notFound, type FieldError } from '#common';
import { FlavorRepository, JobRepository, PendingLimitError, PROGRESS_GRACE_SLACK_SECONDS, SubmissionQueueFullError, TeamRepository, type JobDetail, type NewJob } from '#db';
import { envelopeOf, podPolicyRefusals, rolesProblem, type JobRole, type JobState } from '#core';
import { canActForTeam, canReadTeam, canReportForTeam, idempotencyScope, type Principal } from '../auth/principal.js';
import { validationFailed } from '../validation/validation.pipe.js';
import { ClusterNamespaces } from './cluster-namespaces.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { CANCELLABLE_STATES, type CancelJobsDto, type CreateJobDto, JOB_LIMITS, type JobPriorityDto, type JobProgressDto, type JobStatusDto, type ListJobsQuery, TEMPLATE_DEFAULTS } from './job.dto.js';
import { eventView, jobSummaryView, jobView, type JobCancellationsView, type JobDetailView, type JobEventListView, type JobListView } from './job.view.js';
import { plainPodTemplate, podTemplateProblems, templateSizeProblem } from './pod-template.dto.js';
import { priorityFromClasses, priorityWithoutClasses } from './job-priority.js';
import { PriorityChoiceCache } from './priority-choices.js';
import { pendingLimitExceeded, SubmissionLimits, TeamSettingsCache } from './submission-limits.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface Submitted {
  created: boolean;
  job: JobDetailView;
}

@Injectable()
export class JobsService {
  constructor(
    @Inject(JobRepository) private readonly jobs: JobRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
    @Inject(PriorityChoiceCache) private readonly priorities: PriorityChoiceCache,
    @Inject(SubmissionLimits) private readonly limits: SubmissionLimits,
    @Inject(TeamSettingsCache) private readonly teamSettings: TeamSettingsCache,
    @Inject(ClusterNamespaces) private readonly namespaces: ClusterNamespaces,
    @Inject(Config) private readonly config: Config,
  ) {}

  /**
   * One round trip on the happy path: validation is in memory, and the INSERT itself checks that the team
   * and flavors exist and claims the Idempotency-Key.
   */
  async submit(dto: CreateJobDto, caller: Principal, idempotencyKey: string | undefined): Promise<Submitted> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw validationFailed([{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
    }
    if (!canActForTeam(caller, dto.team)) throw forbidden(`${caller.subject} may not submit jobs for team ${dto.team}`);
    const job = normalize(dto, { maxTemplateBytes: this.config.maxTemplateBytes });
    // What the pods may reference in Kubernetes: only what the team's pod policy lists (admins included: they set it).
    const policy = await this.teamSettings.podPolicy(dto.team);
    const refused = policy === null ? [] : podPolicyRefusals(dto.template, policy);
    if (refused.length > 0) throw validationFailed(refused);
    // The key's hash is of the request as asked (the class by name), not of the value the class has today.
    const idempotency = idempotencyKey === undefined ? null : { key: idempotencyKey, requestHash: requestHash(job), scope: idempotencyScope(caller) };
    // Its pods go to the team's namespace: one that exists (or that Quartermaster may create), never Quartermaster's own.
    job.namespace = await this.teamSettings.podsNamespace(dto.team);
    // Who submits it, for accounting: the token (its subject is free text two tokens may share).
    job.createdByToken = caller.tokenId;
    const elsewhere = job.namespace === null ? null : await this.namespaces.jobsRefusal(job.namespace);
    if (elsewhere !== null) throw new AppError('UNKNOWN_REFERENCE', `team ${dto.team}: ${elsewhere}`, [{ field: 'team', message: elsewhere }]);
    const priority = priorityWithoutClasses(dto, caller) ?? priorityFromClasses(dto, caller, await this.priorities.choiceFor(dto.team));
    job.priority = priority.priority;
    job.priorityClass = priority.priorityClass;
    // Per-team limits: the rate here (Redis, shared by the replicas); the pending-job cap with the insert (429 each).
    // A replay of a request already stored creates nothing: it is answered as such whatever the rate.
    const replay = await this.limits.admit(job.team).then(
      () => null,
      async (error: unknown) => {
        const prior = error instanceof LimitExceededError && idempotency !== null ? await this.jobs.priorSubmission(caller.subject, idempotency) : null;
        if (prior === null) throw error;
        return prior;
      },
    );
    const result = replay ?? await this.jobs.submit(job, caller.subject, idempotency).catch((error: unknown) => {
      if (error instanceof SubmissionQueueFullError) throw new AppError('UNAVAILABLE', `the API is overloaded (${error.message}); retry shortly`);
      if (error instanceof PendingLimitError) throw pendingLimitExceeded(error);
      throw error;
    });
    switch (result.kind) {
      case 'created':
        return { created: true, job: jobView(result.job) };
      case 'replayed':
        return { created: false, job: jobView(result.job) };
      case 'key-reused':
        throw new AppError(
          'IDEMPOTENCY_KEY_REUSED',
          `Idempotency-Key ${idempotencyKey} was already used by this token for another request (job ${result.jobId}); use a new key for a new job`,
        );
      case 'unknown-references':
        throw await this.unknownReferences(job);
    }
  }

  async list(q: ListJobsQuery, caller: Principal): Promise<JobListView> {
    if (q.team !== undefined && !canReadTeam(caller, q.team)) throw forbidden(`${caller.subject} may not list jobs of team ${q.team}`);
    const limit = q.limit ?? 50;
    const rows = await this.jobs.list({
      teams: caller.role === 'admin' ? undefined : caller.teams,
      team: q.team,
      state: q.state,
      kind: q.kind,
      name: q.name,
      limit: limit + 1,
      before: q.cursor === undefined ? undefined : decodeCursor(q.cursor),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { items: page.map(jobSummaryView), nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  async get(id: string, caller: Principal): Promise<JobDetail> {
    const job = await this.jobs.get(id);
    // Another team's job is answered as a missing one: a 403 would confirm to any member that the id exists.
    if (!job || !canReadTeam(caller, job.team)) throw notFound(`job ${id}`);
    return job;
  }

  async events(id: string, caller: Principal): Promise<JobEventListView> {
    await this.get(id, caller);
    const events = await this.jobs.events(id);
    return {
      items: events.map(eventView),
    };
  }

  /** A team's unfinished jobs matching the filter, cancelled oldest first, at most `limit` (1000) per call. */
  async cancelMatching(dto: CancelJobsDto, caller: Principal): Promise<JobCancellationsView> {
    if (!canActForTeam(caller, dto.team)) throw forbidden(`${caller.subject} may not cancel jobs of team ${dto.team}`);
    const filter = { team: dto.team, states: dto.states ?? CANCELLABLE_STATES, ...(dto.name === undefined ? {} : { name: dto.name }), ...(dto.createdBy === undefined ? {} : { createdBy: dto.createdBy }) };
    const dryRun = dto.dryRun === true;
    const { cancelled, more } = await this.jobs.cancelMatching(filter, dto.limit ?? 1000, caller.subject, dryRun);
    return { cancelled: dryRun ? 0 : cancelled.length, jobs: cancelled, more, dryRun };
  }

  /** Idempotent: cancelling a cancelled job returns it unchanged. */
  async cancel(id: string, caller: Principal): Promise<JobDetailView> {
    const job = await this.get(id, caller);
    if (!canActForTeam(caller, job.team)) throw forbidden(`${caller.subject} may not cancel jobs of team ${job.team}`);
    return jobView(this.changed(id, await this.jobs.cancel(id, caller.subject), 'CANCELLED'));
  }

  async report(id: string, dto: JobStatusDto, caller: Principal): Promise<JobDetailView> {
    const job = await this.get(id, caller);
    if (!canReportForTeam(caller, job.team)) {
      throw forbidden(`${caller.subject} is a ${caller.role}: job states are reported by admins and by executor tokens of team ${job.team}`);
    }
    const reason = dto.reason ?? `reported by ${caller.subject}`;
    return jobView(this.changed(id, await this.jobs.report(id, dto.state, caller.subject, reason), dto.state));
  }

  /**
   * A PENDING job's priority, chosen as at submission: a class within the team's ceiling (members), or a
   * number (admins). 409 for a job that is not PENDING; 200 unchanged when it already has that priority.
   */
  async changePriority(id: string, dto: JobPriorityDto, caller: Principal): Promise<JobDetailView> {
    const job = await this.get(id, caller);
    if (!canActForTeam(caller, job.team)) throw forbidden(`${caller.subject} may not change the priority of jobs of team ${job.team}`);
    if (dto.priority == null && dto.priorityClass == null) throw validationFailed([{ field: 'priorityClass', message: 'give the priorityClass to change to (admins may give a numeric priority instead)' }]);
    const next = priorityWithoutClasses(dto, caller) ?? priorityFromClasses(dto, caller, await this.priorities.choiceFor(job.team));
    const change = await this.jobs.changePriority(id, next, caller.subject);
    switch (change.kind) {
      case 'missing':
        throw notFound(`no job ${id}`);
      case 'not-pending':
        throw new AppError('CONFLICT', `job ${id} is ${change.state}: only a PENDING job's priority can change (cancel and submit again for one that holds accelerators)`);
      case 'changed':
      case 'unchanged':
        return jobView(change.job);
    }
  }

  /** An executor's progress: last checkpoint and fraction done, for a job that holds its accelerators or is in its grace period after a preemption. */
  async progress(id: string, dto: JobProgressDto, caller: Principal): Promise<JobDetailView> {
    const job = await this.get(id, caller);
    if (!canReportForTeam(caller, job.team)) {
      throw forbidden(`${caller.subject} is a ${caller.role}: progress is reported by admins and by executor tokens of team ${job.team}`);
    }
    if (dto.lastCheckpointAt === undefined && dto.completedFraction === undefined) {
      throw validationFailed([{ field: 'lastCheckpointAt', message: 'give lastCheckpointAt, completedFraction or both' }]);
    }
    let at: Date | null = null;
    if (dto.lastCheckpointAt !== undefined) {
      at = new Date(dto.lastCheckpointAt);
      if (Number.isNaN(at.getTime())) throw validationFailed([{ field: 'lastCheckpointAt', message: 'is not a valid time' }]);
      // A minute of clock skew between the executor and the API is tolerated.
      if (at.getTime() > Date.now() + 60_000) throw validationFailed([{ field: 'lastCheckpointAt', message: 'must not be in the future' }]);
    }
    const r = await this.jobs.reportProgress(id, { lastCheckpointAt: at, completedFraction: dto.completedFraction ?? null });
    switch (r.kind) {
      case 'updated':
        return jobView(r.job);
      case 'missing':
        throw notFound(`job ${id}`);
      case 'not-running':
        throw new AppError(
          'INVALID_TRANSITION',
          `job ${id} is ${r.state}: progress is reported while it holds accelerators (ADMITTED, BINDING or RUNNING), or by a job that checkpoints within its grace period (plus ${PROGRESS_GRACE_SLACK_SECONDS} s) after it was preempted or moved`,
        );
    }
  }

  private changed(id: string, change: Awaited<ReturnType<JobRepository['report']>>, to: JobState): JobDetail {
    switch (change.kind) {
      case 'changed':
      case 'unchanged':
        return change.job;
      case 'missing':
        throw notFound(`job ${id}`);
      case 'invalid':
        throw new AppError('INVALID_TRANSITION', `job ${id} is ${change.from} and cannot become ${to}`);
    }
  }

  private async unknownReferences(job: NewJob): Promise<AppError> {
    const [teams, flavors] = await Promise.all([this.teams.missing([job.team]), this.flavors.missing(job.flavors)]);
    const errors: FieldError[] = [];
    if (teams.length > 0) errors.push({ field: 'team', message: `unknown team: ${job.team}` });
    for (const f of flavors) errors.push({ field: `flavors[${job.flavors.indexOf(f)}]`, message: `unknown flavor: ${f}` });
    if (errors.length === 0) errors.push({ field: 'team', message: 'team or flavor was deleted during submission; retry' });
    return new AppError('UNKNOWN_REFERENCE', errors.map((e) => e.message).join('; '), errors);
  }
}

/** Applies the documented defaults; a template larger than `maxTemplateBytes` as stored is a 400 naming `template`. */
export function normalize(dto: CreateJobDto, bounds: { maxTemplateBytes: number }): NewJob {
  const t = dto.template;
  const template: Record<string, unknown> = { image: t.image };
  if (t.command !== undefined) template.command = t.command;
  if (t.args !== undefined) template.args = t.args;
  if (t.env !== undefined) template.env = t.env;
  for (const field of ['volumes', 'volumeMounts', 'imagePullSecrets', 'tolerations', 'serviceAccountName', 'automountServiceAccountToken', 'nodeSelector'] as const) {
    if (t[field] !== undefined) template[field] = plainPodTemplate(t[field]);
  }
  const cpuMillis = t.cpuMillis ?? TEMPLATE_DEFAULTS.cpuMillis;
  const memoryMiB = t.memoryMiB ?? TEMPLATE_DEFAULTS.memoryMiB;
  template.cpuMillis = cpuMillis;
  template.memoryMiB = memoryMiB;
  const tooLarge = templateSizeProblem(template, bounds.maxTemplateBytes);
  const problems = [...podTemplateProblems(t), ...(tooLarge === null ? [] : [tooLarge])];
  if (problems.length > 0) throw validationFailed(problems);
  const tpuShape = dto.topology?.tpuShape ?? null;
  let level = dto.topology?.level ?? 'none';
  if (tpuShape !== null) {
    if (level === 'zone' || level === 'block') {
      throw validationFailed([{ field: 'topology.tpuShape', message: "a TPU shape implies level 'domain'; drop level or set it to domain" }]);
    }
    level = 'domain';
  }
  const roles = rolesOfDto(dto, cpuMillis, memoryMiB);
  const shape = roles === null
    ? { replicas: dto.replicas, minReplicas: dto.minReplicas ?? dto.replicas, acceleratorsPerReplica: dto.acceleratorsPerReplica, cpuMillisPerReplica: cpuMillis, memoryMiBPerReplica: memoryMiB }
    : envelopeOf(roles);
  return {
    name: dto.name,
    team: dto.team,
    kind: dto.kind ?? 'training',
    priority: dto.priority ?? 0,
    ...(dto.priorityClass != null ? { priorityClass: dto.priorityClass } : {}),
    preemptible: dto.preemptible ?? true,
    ...shape,
    ...(roles === null ? {} : { roles }),
    flavors: dto.flavors,
    flavorSelection: dto.flavorSelection ?? 'preference',
    speeds: dto.speeds === undefined ? null : { ...dto.speeds },
    topologyLevel: level,
    tpuShape,
    expectedRuntimeSeconds: dto.expectedRuntimeSeconds ?? null,
    checkpoint: dto.checkpoint == null ? null : { intervalSeconds: dto.checkpoint.intervalSeconds, gracePeriodSeconds: dto.checkpoint.gracePeriodSeconds ?? 0 },
    template,
  };
}

/**
 * A multi-role gang's roles, each role's CPU and memory defaulting to the template's; null for a job of one role.
 * `roles` replaces replicas, minReplicas and acceleratorsPerReplica (giving both is a 400 naming the field).
 */
function rolesOfDto(dto: CreateJobDto, cpuMillis: number, memoryMiB: number): JobRole[] | null {
  if (dto.roles == null) return null;
  const both = (['replicas', 'minReplicas', 'acceleratorsPerReplica'] as const).filter((f) => dto[f] !== undefined && dto[f] !== null);
  if (both.length > 0) {
    throw validationFailed(both.map((field) => ({ field, message: 'is not allowed together with roles: give each role its own' })));
  }
  const roles: JobRole[] = dto.roles.map((r) => ({
    name: r.name,
    replicas: r.replicas,
    minReplicas: r.minReplicas ?? r.replicas,
    acceleratorsPerReplica: r.acceleratorsPerReplica,
    cpuMillisPerReplica: r.cpuMillis ?? cpuMillis,
    memoryMiBPerReplica: r.memoryMiB ?? memoryMiB,
  }));
  const problem = rolesProblem(roles);
  if (problem !== null) throw validationFailed([problem]);
  const total = roles.reduce((sum, r) => sum + r.replicas, 0);
  if (total > JOB_LIMITS.replicas.max) throw validationFailed([{ field: 'roles', message: `must have at most ${JOB_LIMITS.replicas.max} replicas in all (got ${total})` }]);
  return roles;
}

/** Hash of the normalized request: the same job asked twice (defaults spelled out or not) hashes the same. */
export function requestHash(job: NewJob): string {
  return createHash('sha256').update(canonicalJson(job)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
