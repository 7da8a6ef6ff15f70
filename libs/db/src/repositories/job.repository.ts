import type { PoolClient } from 'pg';
import { canTransition, holdsAllocation, isTerminal, type JobState } from '#core';
import { inTransaction, type DbHandle } from './db-handle.js';
import type { EventRecord, JobDetail, JobListFilter, JobRecord, NewJob, StateChange, SubmitResult } from './job.records.js';
import { type BatcherOptions, SubmissionBatcher } from './job-submission.js';
import { DETAIL_SELECT, JOB_COLUMNS, toDetail, toRecord, type DetailRow, type JobRow } from './job.rows.js';
import { UUID } from '../uuid.js';

/** Jobs: submission (hot path, raw SQL), reads, cancellation and reported state changes. */
export class JobRepository {
  constructor(
    private readonly db: DbHandle,
    grouping: BatcherOptions = { maxGroup: 128, maxInFlight: 2 },
  ) {
    this.submitter = new SubmissionBatcher(db, (id) => this.get(id), grouping);
  }

  private readonly submitter: SubmissionBatcher;

  /** Submission: one statement, grouped with concurrent submissions (see job-submission.ts). */
  submit(job: NewJob, actor: string, idempotency: { key: string; requestHash: string } | null): Promise<SubmitResult> {
    return this.submitter.submit(job, actor, idempotency);
  }

  async get(id: string): Promise<JobDetail | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.db.pool.query<DetailRow>(`${DETAIL_SELECT} WHERE j.id = $1`, [id]);
    return rows[0] ? toDetail(rows[0]) : null;
  }

  /** Newest first: (submittedAt, id) descending. */
  async list(f: JobListFilter): Promise<JobRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (sql: string, value: unknown): void => {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    };
    if (f.teams !== undefined) add('team = ANY(?::text[])', f.teams);
    if (f.team !== undefined) add('team = ?', f.team);
    if (f.state !== undefined) add('state = ?::job_state', f.state);
    if (f.kind !== undefined) add('kind = ?::job_kind', f.kind);
    if (f.before !== undefined) {
      values.push(f.before.submittedAt, f.before.id);
      where.push(`(submitted_at, id) < ($${values.length - 1}, $${values.length}::uuid)`);
    }
    values.push(f.limit);
    const sql = `SELECT ${JOB_COLUMNS} FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY submitted_at DESC, id DESC LIMIT $${values.length}`;
    const { rows } = await this.db.pool.query<JobRow>(sql, values);
    return rows.map(toRecord);
  }

  async events(jobId: string): Promise<EventRecord[]> {
    if (!UUID.test(jobId)) return [];
    const { rows } = await this.db.pool.query<{
      id: string;
      at: Date;
      kind: string;
      job_id: string | null;
      team: string | null;
      actor: string;
      message: string;
      data: unknown;
    }>('SELECT id::text AS id, at, kind, job_id, team, actor, message, data FROM events WHERE job_id = $1 ORDER BY id', [jobId]);
    return rows.map((r) => ({ id: r.id, at: r.at, kind: r.kind, jobId: r.job_id, team: r.team, actor: r.actor, message: r.message, data: r.data }));
  }

  /**
   * Cancels a job (idempotent: a cancelled job is returned unchanged). Releases its allocation and, when it
   * held one, writes a `delete` outbox entry so that the workers remove its pods.
   */
  async cancel(id: string, actor: string): Promise<StateChange> {
    return this.changeState(id, 'CANCELLED', actor, `cancelled by ${actor}`);
  }

  /** A state reported by an executor (RUNNING / SUCCEEDED / FAILED), checked against the lifecycle table. */
  async report(id: string, to: JobState, actor: string, reason: string): Promise<StateChange> {
    return this.changeState(id, to, actor, reason);
  }

  private async changeState(id: string, to: JobState, actor: string, reason: string): Promise<StateChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const outcome = await inTransaction(this.db.pool, async (client): Promise<StateChange | 'changed' | 'unchanged'> => {
      const { rows } = await client.query<{ state: JobState; team: string }>('SELECT state, team FROM jobs WHERE id = $1 FOR UPDATE', [id]);
      const current = rows[0];
      if (!current) return { kind: 'missing' };
      if (current.state === to) return 'unchanged'; // a retried report (or cancel) of the state it is in: nothing to write
      if (!canTransition(current.state, to)) return { kind: 'invalid', from: current.state };
      await applyTransition(client, id, current.team, current.state, to, actor, reason);
      return 'changed';
    });
    if (typeof outcome !== 'string') return outcome;
    const job = await this.get(id);
    if (!job) return { kind: 'missing' };
    return { kind: outcome, job };
  }
}

async function applyTransition(client: PoolClient, id: string, team: string, from: JobState, to: JobState, actor: string, reason: string): Promise<void> {
  const terminal = isTerminal(to);
  await client.query(
    `UPDATE jobs SET state = $2::job_state, version = version + 1, updated_at = now(),
       started_at = CASE WHEN $2 = 'RUNNING' AND started_at IS NULL THEN now() ELSE started_at END,
       finished_at = CASE WHEN $3 THEN now() ELSE finished_at END,
       pending_code = CASE WHEN $3 THEN NULL ELSE pending_code END,
       pending_message = CASE WHEN $3 THEN NULL ELSE pending_message END,
       pending_position = CASE WHEN $3 THEN NULL ELSE pending_position END,
       pending_estimated_start_at = CASE WHEN $3 THEN NULL ELSE pending_estimated_start_at END,
       reservation = CASE WHEN $3 THEN NULL ELSE reservation END
     WHERE id = $1`,
    [id, to, terminal],
  );
  if (terminal) await client.query('DELETE FROM allocations WHERE job_id = $1', [id]);
  await client.query(`INSERT INTO job_transitions (job_id, "from", "to", reason) VALUES ($1, $2::job_state, $3::job_state, $4)`, [id, from, to, reason]);
  await client.query(`INSERT INTO events (kind, job_id, team, actor, message, data) VALUES ($1, $2, $3, $4, $5, $6::jsonb)`, [
    `job.${to.toLowerCase()}`,
    id,
    team,
    actor,
    `${from} → ${to}: ${reason}`,
    JSON.stringify({ from, to }),
  ]);
  if (terminal && holdsAllocation(from)) {
    await client.query(
      `INSERT INTO outbox (kind, payload, dedupe_key) VALUES ('delete', $1::jsonb, $2) ON CONFLICT (dedupe_key) DO NOTHING`,
      [JSON.stringify({ jobId: id }), `delete:${id}`],
    );
  }
}
