import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { canTransition, holdsAllocation, isTerminal, type JobState } from '#core';
import { inTransaction, type DbHandle } from './db-handle.js';
import type { EventRecord, JobDetail, JobListFilter, JobRecord, NewJob, StateChange, SubmitResult } from './job.records.js';

interface JobRow {
  id: string;
  name: string;
  team: string;
  kind: NewJob['kind'];
  priority: number;
  preemptible: boolean;
  replicas: number;
  min_replicas: number;
  accelerators_per_replica: number;
  cpu_millis_per_replica: number;
  memory_mib_per_replica: number;
  flavors: string[];
  flavor_selection: NewJob['flavorSelection'];
  speeds: Record<string, number> | null;
  topology_level: NewJob['topologyLevel'];
  tpu_shape: string | null;
  expected_runtime_seconds: number | null;
  template: Record<string, unknown>;
  state: JobState;
  flavor: string | null;
  admitted_replicas: number | null;
  pending_code: string | null;
  pending_message: string | null;
  pending_position: number | null;
  pending_estimated_start_at: Date | null;
  preempted_by: string | null;
  preemption_count: number;
  submitted_at: Date;
  queued_at: Date;
  admitted_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_by: string;
  version: number;
}

interface DetailRow extends JobRow {
  allocation: { replica: number; node: string; accelerators: number; cpuMillis: number; memoryMiB: number }[];
  transitions: { from: JobState | null; to: JobState; at: string; reason: string }[];
}

const JOB_COLUMNS = `id, name, team, kind, priority, preemptible, replicas, min_replicas, accelerators_per_replica,
  cpu_millis_per_replica, memory_mib_per_replica, flavors, flavor_selection, speeds, topology_level, tpu_shape,
  expected_runtime_seconds, template, state, flavor, admitted_replicas, pending_code, pending_message, pending_position,
  pending_estimated_start_at, preempted_by, preemption_count, submitted_at, queued_at, admitted_at, started_at,
  finished_at, created_by, version`;

const J_COLUMNS = JOB_COLUMNS.split(',').map((c) => `j.${c.trim()}`).join(', ');

const DETAIL_SELECT = `SELECT ${J_COLUMNS},
  COALESCE((SELECT json_agg(json_build_object('replica', a.replica, 'node', a.node, 'accelerators', a.accelerators,
      'cpuMillis', a.cpu_millis, 'memoryMiB', a.memory_mib) ORDER BY a.replica) FROM allocations a WHERE a.job_id = j.id), '[]') AS allocation,
  COALESCE((SELECT json_agg(json_build_object('from', t."from", 'to', t."to", 'at', t.at, 'reason', t.reason) ORDER BY t.id)
      FROM job_transitions t WHERE t.job_id = j.id), '[]') AS transitions
  FROM jobs j`;

const toRecord = (r: JobRow): JobRecord => ({
  id: r.id,
  name: r.name,
  team: r.team,
  kind: r.kind,
  priority: r.priority,
  preemptible: r.preemptible,
  replicas: r.replicas,
  minReplicas: r.min_replicas,
  acceleratorsPerReplica: r.accelerators_per_replica,
  cpuMillisPerReplica: r.cpu_millis_per_replica,
  memoryMiBPerReplica: r.memory_mib_per_replica,
  flavors: r.flavors,
  flavorSelection: r.flavor_selection,
  speeds: r.speeds,
  topologyLevel: r.topology_level,
  tpuShape: r.tpu_shape,
  expectedRuntimeSeconds: r.expected_runtime_seconds,
  template: r.template,
  state: r.state,
  flavor: r.flavor,
  admittedReplicas: r.admitted_replicas,
  pendingCode: r.pending_code,
  pendingMessage: r.pending_message,
  pendingPosition: r.pending_position,
  pendingEstimatedStartAt: r.pending_estimated_start_at,
  preemptedBy: r.preempted_by,
  preemptionCount: r.preemption_count,
  submittedAt: r.submitted_at,
  queuedAt: r.queued_at,
  admittedAt: r.admitted_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  createdBy: r.created_by,
  version: r.version,
});

const toDetail = (r: DetailRow): JobDetail => ({
  ...toRecord(r),
  allocation: r.allocation,
  transitions: r.transitions.map((t) => ({ from: t.from, to: t.to, at: new Date(t.at), reason: t.reason })),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The submission statement: one round trip. It checks that the team and every flavor exist, claims the
 * Idempotency-Key (when given) and inserts the job, its first transition and its `job.submitted` event —
 * all or nothing. Foreign keys of the CTEs are checked at the end of the statement.
 */
const SUBMIT_SQL = `
WITH ok AS (
  SELECT EXISTS (SELECT 1 FROM teams WHERE name = $2) AS team_ok,
         (SELECT count(*) FROM flavors WHERE name = ANY($12::text[])) = cardinality($12::text[]) AS flavors_ok
), k AS (
  INSERT INTO idempotency_keys (key, subject, request_hash, job_id)
  SELECT $19::text, $20, $21, $1::uuid FROM ok WHERE ok.team_ok AND ok.flavors_ok AND $19::text IS NOT NULL
  ON CONFLICT (subject, key) DO NOTHING
  RETURNING job_id
), j AS (
  INSERT INTO jobs (id, name, team, kind, priority, preemptible, replicas, min_replicas, accelerators_per_replica,
    cpu_millis_per_replica, memory_mib_per_replica, flavors, flavor_selection, speeds, topology_level, tpu_shape,
    expected_runtime_seconds, template, created_by)
  SELECT $1::uuid, $3, $2, $4::job_kind, $5, $6, $7, $8, $9, $10, $11, $12::text[], $13::flavor_selection, $14::jsonb,
    $15::topology_level, $16, $17, $18::jsonb, $20
  FROM ok WHERE ok.team_ok AND ok.flavors_ok AND ($19::text IS NULL OR EXISTS (SELECT 1 FROM k))
  RETURNING ${JOB_COLUMNS}
), t AS (
  INSERT INTO job_transitions (job_id, "from", "to", at, reason) SELECT id, NULL, 'PENDING', submitted_at, 'submitted' FROM j
), e AS (
  INSERT INTO events (at, kind, job_id, team, actor, message, data)
  SELECT submitted_at, 'job.submitted', id, team, $20, 'submitted by ' || $20, '{}'::jsonb FROM j
)
SELECT ok.team_ok, ok.flavors_ok, j.* FROM ok LEFT JOIN j ON true`;

/** Jobs: submission (hot path, raw SQL), reads, cancellation and reported state changes. */
export class JobRepository {
  constructor(private readonly db: DbHandle) {}

  async submit(job: NewJob, actor: string, idempotency: { key: string; requestHash: string } | null): Promise<SubmitResult> {
    const { rows } = await this.db.pool.query<JobRow & { team_ok: boolean; flavors_ok: boolean; id: string | null }>(SUBMIT_SQL, [
      randomUUID(),
      job.team,
      job.name,
      job.kind,
      job.priority,
      job.preemptible,
      job.replicas,
      job.minReplicas,
      job.acceleratorsPerReplica,
      job.cpuMillisPerReplica,
      job.memoryMiBPerReplica,
      job.flavors,
      job.flavorSelection,
      job.speeds === null ? null : JSON.stringify(job.speeds),
      job.topologyLevel,
      job.tpuShape,
      job.expectedRuntimeSeconds,
      JSON.stringify(job.template),
      idempotency?.key ?? null,
      actor,
      idempotency?.requestHash ?? null,
    ]);
    const row = rows[0]!;
    if (!row.team_ok || !row.flavors_ok) return { kind: 'unknown-references', team: !row.team_ok, flavors: !row.flavors_ok };
    if (row.id !== null) {
      const record = toRecord(row);
      return {
        kind: 'created',
        job: { ...record, allocation: [], transitions: [{ from: null, to: 'PENDING', at: record.submittedAt, reason: 'submitted' }] },
      };
    }
    // The key was taken: by the same request (replay) or by another one (conflict).
    const prior = await this.db.pool.query<{ request_hash: string; job_id: string }>(
      'SELECT request_hash, job_id FROM idempotency_keys WHERE subject = $1 AND key = $2',
      [actor, idempotency!.key],
    );
    const key = prior.rows[0];
    if (!key) throw new Error('idempotency key vanished between claim and read');
    if (key.request_hash !== idempotency!.requestHash) return { kind: 'key-reused', jobId: key.job_id };
    const existing = await this.get(key.job_id);
    if (!existing) throw new Error(`job ${key.job_id} of an idempotency key does not exist`);
    return { kind: 'replayed', job: existing };
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
      if (current.state === to && to === 'CANCELLED') return 'unchanged';
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
