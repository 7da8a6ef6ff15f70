import type { JobState } from '#core';
import { inTransaction, type DbHandle } from './db-handle.js';
import { moveJobs } from '../lifecycle/transition-writer.js';
import type { Prisma } from '../generated/prisma/client.js';
import { jobKindToDb } from '../enums.js';
import {
  EVENT_SELECT,
  JOB_DETAIL_SELECT,
  JOB_SUMMARY_SELECT,
  toEventRecord,
  toJobDetail,
  type EventRecord,
  type JobDetail,
  type JobListFilter,
  type JobSummary,
  type NewJob,
  type StateChange,
  type SubmitResult,
} from './job.records.js';
import { type BatcherOptions, type IdempotencyClaim, SubmissionBatcher } from './job-submission.js';
import { jobSummaries } from './job-summaries.js';
import { UUID } from '../uuid.js';

/**
 * Jobs: submission (hot path, raw SQL), reads (the Prisma client), cancellation and reported state changes
 * (the transition writer).
 */
export class JobRepository {
  constructor(
    private readonly db: DbHandle,
    grouping: BatcherOptions = { maxGroup: 128, maxInFlight: 2 },
  ) {
    this.submitter = new SubmissionBatcher(db, (id) => this.get(id), grouping);
  }

  private readonly submitter: SubmissionBatcher;

  /** Submission: one statement, grouped with concurrent submissions (see job-submission.ts). */
  submit(job: NewJob, actor: string, idempotency: IdempotencyClaim | null): Promise<SubmitResult> {
    return this.submitter.submit(job, actor, idempotency);
  }

  /** The answer of an earlier submission under this Idempotency-Key (replayed or key-reused), or null. */
  priorSubmission(actor: string, idempotency: IdempotencyClaim): Promise<Extract<SubmitResult, { kind: 'replayed' | 'key-reused' }> | null> {
    return this.submitter.prior(actor, idempotency);
  }

  async get(id: string): Promise<JobDetail | null> {
    if (!UUID.test(id)) return null;
    const row = await this.db.prisma.job.findUnique({ where: { id }, select: JOB_DETAIL_SELECT });
    return row === null ? null : toJobDetail(row);
  }

  /** Newest first: (submittedAt, id) descending; summaries, without pod templates (`get` has them). */
  async list(f: JobListFilter): Promise<JobSummary[]> {
    const where: Prisma.JobWhereInput[] = [];
    if (f.teams !== undefined) where.push({ team: { in: [...f.teams] } });
    if (f.team !== undefined) where.push({ team: f.team });
    if (f.state !== undefined) where.push({ state: f.state });
    if (f.kind !== undefined) where.push({ kind: jobKindToDb(f.kind) });
    if (f.name !== undefined) where.push({ name: f.name });
    if (f.before !== undefined) {
      // (submittedAt, id) < before, with `submittedAt <= before` on its own so that the index on
      // (submitted_at DESC, id DESC) starts there instead of filtering every newer job.
      const { submittedAt, id } = f.before;
      where.push({ submittedAt: { lte: submittedAt } }, { OR: [{ submittedAt: { lt: submittedAt } }, { id: { lt: id } }] });
    }
    const rows = await this.db.prisma.job.findMany({
      where: { AND: where },
      select: JOB_SUMMARY_SELECT,
      orderBy: [{ submittedAt: 'desc' }, { id: 'desc' }],
      take: f.limit,
    });
    return jobSummaries(this.db, rows);
  }

  async events(jobId: string): Promise<EventRecord[]> {
    if (!UUID.test(jobId)) return [];
    const rows = await this.db.prisma.event.findMany({ where: { jobId }, select: EVENT_SELECT, orderBy: { id: 'asc' } });
    return rows.map(toEventRecord);
  }

  /**
   * Cancels a job (idempotent: a cancelled job is returned unchanged). Releases its allocation and, when it
   * held one, writes a `delete` outbox entry so that the workers remove its pods.
   */
  async cancel(id: string, actor: string): Promise<StateChange> {
    return this.changeState(id, 'CANCELLED', actor, `cancelled by ${actor}`);
  }

  /**
   * Cancels, oldest first, at most `limit` jobs of `team` in one of `states` (and named `name`, submitted by
   * `createdBy`, when given), each through the transition writer as a single cancel is: the ones cancelled, with the
   * state each left, and whether more matched. A job that changed state meanwhile is left as it is.
   */
  async cancelMatching(
    filter: { team: string; states: readonly JobState[]; name?: string; createdBy?: string },
    limit: number,
    actor: string,
    dryRun = false,
  ): Promise<{ cancelled: { id: string; name: string; from: JobState }[]; more: boolean }> {
    const { rows } = await this.db.pool.query<{ id: string; name: string; state: JobState }>(
      `SELECT id::text AS id, name, state::text AS state FROM jobs
       WHERE team = $1 AND state = ANY($2::job_state[]) AND ($3::text IS NULL OR name = $3) AND ($4::text IS NULL OR created_by = $4)
       ORDER BY submitted_at, id LIMIT $5`,
      [filter.team, filter.states, filter.name ?? null, filter.createdBy ?? null, limit + 1],
    );
    const batch = rows.slice(0, limit);
    if (batch.length === 0) return { cancelled: [], more: false };
    // What would be cancelled now, nothing written.
    if (dryRun) return { cancelled: batch.map((r) => ({ id: r.id, name: r.name, from: r.state })), more: rows.length > limit };
    const names = new Map(batch.map((r) => [r.id, r.name]));
    // The cancels and their audit entry commit together: no cancel without its entry, no entry without a cancel.
    const cancelled = await inTransaction(this.db.pool, async (client) => {
      const { results } = await moveJobs(
        client,
        batch.map((r) => ({ jobId: r.id, to: 'CANCELLED' as const, from: filter.states, reason: `cancelled by ${actor}` })),
        { actor },
      );
      const moved = results.flatMap((r) => (r.moved ? [{ id: r.jobId, name: names.get(r.jobId) ?? '', from: r.from }] : []));
      // In the audit trail: who cancelled how many of the team's jobs, by which filter (each job's own events name it too).
      if (moved.length > 0) {
        const by = [`states ${filter.states.join(',')}`, ...(filter.name ? [`name ${filter.name}`] : []), ...(filter.createdBy ? [`createdBy ${filter.createdBy}`] : [])].join(', ');
        await client.query(`INSERT INTO events (kind, team, actor, message, data) VALUES ('jobs.cancelled', $1, $2, $3, $4)`, [
          filter.team,
          actor,
          `${moved.length} job(s) of team ${filter.team} cancelled by ${actor} (${by})`,
          JSON.stringify({ filter, jobs: moved.map((j) => j.id) }),
        ]);
      }
      return moved;
    });
    return { cancelled, more: rows.length > limit };
  }

  /** A state reported by an executor (RUNNING / SUCCEEDED / FAILED), checked against the lifecycle table. */
  async report(id: string, to: JobState, actor: string, reason: string): Promise<StateChange> {
    return this.changeState(id, to, actor, reason);
  }

  /**
   * An executor's progress report for a job that holds its accelerators — or that declares checkpointing and
   * was requeued (preempted, moved, its gang lost) and is in its grace period: from the requeue until its
   * eviction is carried out (the `evict` side effect runs after the commit, so its pods run and checkpoint
   * until then, however late that is: a Redis outage delays it) and its checkpoint grace period plus
   * PROGRESS_GRACE_SLACK_SECONDS after that (the eviction's done_at; the requeue when it has none): its pods
   * are given that long to write a checkpoint, and the checkpoint they write is what its next run resumes from. Its last checkpoint and the fraction of its work done then,
   * each kept when not given. A fraction reported in that grace period (the job PENDING, or already admitted
   * again — a move — and not yet RUNNING) is also where its next run resumes from (`resume_fraction`, set by
   * the transition writer at the requeue). Not a state change: the lifecycle is untouched.
   */
  async reportProgress(id: string, p: { lastCheckpointAt: Date | null; completedFraction: number | null }): Promise<ProgressChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const { rows } = await this.db.pool.query<{ state: JobState; updated: boolean }>(
      `WITH w AS (
         SELECT j.id, j.checkpoint IS NOT NULL AND j.state IN ('PENDING', 'ADMITTED', 'BINDING') AND EXISTS (
           SELECT 1 FROM (SELECT t.at FROM job_transitions t WHERE t.job_id = j.id AND t."from" = 'PREEMPTED' ORDER BY t.id DESC LIMIT 1) requeue
           LEFT JOIN LATERAL (
             -- The eviction of that requeue: its outbox entry, written with it at the job's version then (a move
             -- admits it again, and binding moves it on: a few versions back at most).
             SELECT o.status, o.done_at FROM outbox o
             WHERE o.dedupe_key IN (SELECT 'evict:' || j.id::text || ':v' || v FROM generate_series(j.version - 3, j.version) v)
             ORDER BY o.id DESC LIMIT 1) eviction ON TRUE
           WHERE eviction.status = 'pending'
              OR now() <= GREATEST(requeue.at, COALESCE(eviction.done_at, requeue.at))
                          + make_interval(secs => GREATEST(COALESCE((j.checkpoint ->> 'gracePeriodSeconds')::float8, 0), 0) + $4)) AS in_grace
         FROM jobs j WHERE j.id = $1),
       u AS (
         UPDATE jobs j SET last_checkpoint_at = COALESCE($2, j.last_checkpoint_at), completed_fraction = COALESCE($3, j.completed_fraction),
                           resume_fraction = CASE WHEN w.in_grace THEN COALESCE($3, j.resume_fraction) ELSE j.resume_fraction END
         FROM w WHERE j.id = w.id AND (j.state IN ('ADMITTED', 'BINDING', 'RUNNING') OR (j.state = 'PENDING' AND w.in_grace))
         RETURNING j.state)
       SELECT state, true AS updated FROM u
       UNION ALL SELECT state, false FROM jobs WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM u)`,
      [id, p.lastCheckpointAt, p.completedFraction, PROGRESS_GRACE_SLACK_SECONDS],
    );
    const row = rows[0];
    if (row === undefined) return { kind: 'missing' };
    if (!row.updated) return { kind: 'not-running', state: row.state };
    const job = await this.get(id);
    return job === null ? { kind: 'missing' } : { kind: 'updated', job };
  }

  /**
   * A PENDING job's new priority (and the class it came from), with a `job.priority-changed` event naming the
   * actor and both values; its version moves on, so a cycle that decided on the old priority commits nothing
   * for it. Not a state change: the lifecycle is untouched. A job that is not PENDING is left as it is.
   */
  async changePriority(id: string, next: { priority: number; priorityClass: string | null }, actor: string): Promise<PriorityChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const { rows } = await this.db.pool.query<{ state: JobState; changed: boolean }>(
      `WITH o AS (SELECT id, state, team, name, priority, priority_class FROM jobs WHERE id = $1 FOR UPDATE),
       u AS (
         UPDATE jobs j SET priority = $2, priority_class = $3, version = j.version + 1, updated_at = now()
         FROM o WHERE j.id = o.id AND o.state = 'PENDING' AND (o.priority, o.priority_class) IS DISTINCT FROM ($2::int, $3::text)
         RETURNING j.id),
       e AS (
         INSERT INTO events (kind, job_id, team, actor, message, data)
         SELECT 'job.priority-changed', o.id, o.team, $4::text,
                format('priority %s → %s', COALESCE(o.priority_class || ' (' || o.priority || ')', o.priority::text), COALESCE($3::text || ' (' || $2::int || ')', $2::int::text)),
                jsonb_build_object('before', jsonb_build_object('priority', o.priority, 'priorityClass', o.priority_class),
                                   'after', jsonb_build_object('priority', $2::int, 'priorityClass', $3::text))
         FROM o JOIN u ON u.id = o.id)
       SELECT o.state::text AS state, EXISTS (SELECT 1 FROM u) AS changed FROM o`,
      [id, next.priority, next.priorityClass, actor],
    );
    const row = rows[0];
    if (row === undefined) return { kind: 'missing' };
    if (row.state !== 'PENDING') return { kind: 'not-pending', state: row.state };
    const job = await this.get(id);
    return job === null ? { kind: 'missing' } : { kind: row.changed ? 'changed' : 'unchanged', job };
  }

  private async changeState(id: string, to: JobState, actor: string, reason: string): Promise<StateChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const { results } = await moveJobs(this.db.pool, [{ jobId: id, to, reason }], { actor });
    const result = results[0]!;
    if (!result.moved) {
      if (result.state === null) return { kind: 'missing' };
      // A retried report (or cancel) of the state it is in: nothing written.
      if (result.state !== to) return { kind: 'invalid', from: result.state };
    }
    const job = await this.get(id);
    if (!job) return { kind: 'missing' };
    return { kind: result.moved ? 'changed' : 'unchanged', job };
  }
}

/**
 * How long after its grace period (counted from its eviction) a requeued job's progress is still taken
 * (reportProgress): a checkpoint written at the end of the period reaches us a little later (a pod's
 * annotation through the watch, an executor's retried POST).
 */
export const PROGRESS_GRACE_SLACK_SECONDS = 60;

export type ProgressChange = { kind: 'updated'; job: JobDetail } | { kind: 'missing' } | { kind: 'not-running'; state: JobState };

/** What a priority change did. */
export type PriorityChange =
  | { kind: 'missing' }
  | { kind: 'not-pending'; state: JobState }
  | { kind: 'changed' | 'unchanged'; job: JobDetail };
