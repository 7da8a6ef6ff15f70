import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { pgCode, PG_FOREIGN_KEY_VIOLATION, type DbHandle } from './db-handle.js';
import type { JobDetail, JobRecord, NewJob, SubmitResult } from './job.records.js';
import { GroupBatcher, type GroupBatcherOptions } from '../group-batcher.js';
import { insertWithinPendingLimits, PendingLimitError, type PendingLimitOptions } from './pending-limit.js';

/**
 * Job submission as one SQL statement for a whole group of submissions (group commit).
 *
 * Per submission the statement checks that the team and every flavor exist, claims the Idempotency-Key
 * (when given) and inserts the job and its first transition (→ PENDING) — all or nothing for that
 * submission, one round trip and one commit for the group. Under light load a group is a single
 * submission sent at once; under heavy load submissions that arrive while groups are in flight wait
 * for the next group, so the commit cost (an fsync) is shared instead of paid per job.
 *
 * If a group's statement fails, each of its submissions is retried alone, so one bad row cannot fail
 * its neighbours. Foreign keys of the CTEs are checked at the end of the statement.
 */
const GROUP_SQL = `
WITH input AS (
  SELECT i.*, ARRAY(SELECT jsonb_array_elements_text(i.flavors_json::jsonb)) AS flavors
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bool[], $7::int[], $8::int[], $9::int[],
              $10::int[], $11::int[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::int[],
              $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[], $27::uuid[])
       WITH ORDINALITY AS i(id, team, name, kind, priority, preemptible, replicas, min_replicas, accelerators_per_replica,
                            cpu_millis, memory_mib, flavors_json, flavor_selection, speeds, topology_level, tpu_shape,
                            expected_runtime_seconds, template, key, subject, request_hash, checkpoint, key_scope, priority_class, roles, namespace,
                            created_by_token, ord)
), ok AS (
  SELECT input.*,
         EXISTS (SELECT 1 FROM teams t WHERE t.name = input.team) AS team_ok,
         (SELECT count(*) FROM flavors f WHERE f.name = ANY(input.flavors)) = cardinality(input.flavors) AS flavors_ok
  FROM input
), k AS (
  INSERT INTO idempotency_keys (key, subject, request_hash, job_id)
  SELECT key, key_scope, request_hash, id FROM ok WHERE team_ok AND flavors_ok AND key IS NOT NULL ORDER BY ord
  ON CONFLICT (subject, key) DO NOTHING
  RETURNING job_id
), j AS (
  INSERT INTO jobs (id, name, team, kind, priority, priority_class, preemptible, replicas, min_replicas, accelerators_per_replica,
    cpu_millis_per_replica, memory_mib_per_replica, flavors, flavor_selection, speeds, topology_level, tpu_shape,
    expected_runtime_seconds, template, checkpoint, roles, namespace, created_by, created_by_token, submitted_at, queued_at)
  SELECT id, name, team, kind::job_kind, priority, priority_class, preemptible, replicas, min_replicas, accelerators_per_replica,
    cpu_millis, memory_mib, flavors, flavor_selection::flavor_selection, speeds::jsonb, topology_level::topology_level,
    tpu_shape, expected_runtime_seconds, template::jsonb, checkpoint::jsonb, roles::jsonb, namespace, subject, created_by_token,
    clock_timestamp(), clock_timestamp()
  FROM ok WHERE team_ok AND flavors_ok AND (key IS NULL OR id IN (SELECT job_id FROM k))
  ORDER BY ord
  RETURNING id, submitted_at, queued_at
), t AS (
  INSERT INTO job_transitions (job_id, "from", "to", at, reason) SELECT id, NULL, 'PENDING', submitted_at, 'submitted' FROM j
)
SELECT ok.ord, ok.team_ok, ok.flavors_ok, j.id, j.submitted_at, j.queued_at FROM ok LEFT JOIN j ON j.id = ok.id ORDER BY ok.ord`;

/**
 * An Idempotency-Key and the hash of its request. `scope` is whose keys it is among (the column
 * idempotency_keys.subject holds it): the API passes the caller's token id, never its free-text subject,
 * which two tokens may share; without it the actor is the scope (the Kubernetes importers' 'kubernetes').
 */
export interface IdempotencyClaim {
  key: string;
  requestHash: string;
  scope?: string;
}

interface Submission {
  job: NewJob;
  actor: string;
  idempotency: IdempotencyClaim | null;
}

/** Only what the database decided is read back; the rest of the new job is what was sent. */
interface GroupRow {
  ord: string;
  team_ok: boolean;
  flavors_ok: boolean;
  id: string | null;
  submitted_at: Date | null;
  queued_at: Date | null;
}

/** Too many submissions already wait for a group: the caller should answer 503 and the client retry. */
export class SubmissionQueueFullError extends Error {
  override name = 'SubmissionQueueFullError';
}

/** maxQueued defaults to 20 × maxGroup here. */
export type BatcherOptions = Pick<GroupBatcherOptions, 'maxGroup' | 'maxInFlight' | 'maxQueued'> & PendingLimitOptions;

export class SubmissionBatcher {
  private readonly groups: GroupBatcher<Submission, GroupRow | PendingLimitError>;
  private readonly defaultMaxPendingJobs: number | undefined;

  constructor(
    private readonly db: DbHandle,
    private readonly load: (id: string) => Promise<JobDetail | null>,
    options: BatcherOptions = { maxGroup: 128, maxInFlight: 4 },
  ) {
    this.defaultMaxPendingJobs = options.defaultMaxPendingJobs;
    this.groups = new GroupBatcher((group) => this.insert(group), {
      maxGroup: options.maxGroup,
      maxInFlight: options.maxInFlight,
      maxQueued: options.maxQueued ?? options.maxGroup * 20,
      full: (waiting) => new SubmissionQueueFullError(`${waiting} submissions are already waiting to be written`),
    });
  }

  async submit(job: NewJob, actor: string, idempotency: Submission['idempotency']): Promise<SubmitResult> {
    const submission = { job, actor, idempotency };
    let row: GroupRow | PendingLimitError;
    try {
      row = await this.groups.call(submission);
    } catch (error) {
      // Its team was deleted after the statement's existence check (the foreign key waited for the delete to
      // commit): nothing was written; once more, and the check itself says the team is unknown (422, not 500).
      if (pgCode(error) !== PG_FOREIGN_KEY_VIOLATION) throw error;
      row = await this.groups.call(submission);
    }
    if (row instanceof PendingLimitError) throw row;
    return this.outcome(submission, row);
  }

  /** With a pending-job limit, the group's statement runs within it (pending-limit.ts); else as is. */
  private insert(group: readonly Submission[]): Promise<(GroupRow | PendingLimitError)[]> {
    const defaultMax = this.defaultMaxPendingJobs;
    if (defaultMax === undefined) return this.insertGroup(group, this.db.pool);
    const keyOf = (s: Submission): { scope: string; key: string } | null => (s.idempotency === null ? null : { scope: keyScope(s)!, key: s.idempotency.key });
    return insertWithinPendingLimits(this.db, group, { defaultMax, teamOf: (s) => s.job.team, keyOf }, (admitted, client) => this.insertGroup(admitted, client));
  }

  private async insertGroup(group: readonly Submission[], client: Pick<Pool, 'query'>): Promise<GroupRow[]> {
    const col = <T>(f: (s: Submission) => T): T[] => group.map(f);
    // A named statement: Postgres parses and plans the CTE once per connection, not per group.
    const { rows } = await client.query<GroupRow>({ name: 'qm_submit_jobs_v8', text: GROUP_SQL, values: [
      col(() => randomUUID()),
      col((s) => s.job.team),
      col((s) => s.job.name),
      col((s) => s.job.kind),
      col((s) => s.job.priority),
      col((s) => s.job.preemptible),
      col((s) => s.job.replicas),
      col((s) => s.job.minReplicas),
      col((s) => s.job.acceleratorsPerReplica),
      col((s) => s.job.cpuMillisPerReplica),
      col((s) => s.job.memoryMiBPerReplica),
      col((s) => JSON.stringify(s.job.flavors)),
      col((s) => s.job.flavorSelection),
      col((s) => (s.job.speeds === null ? null : JSON.stringify(s.job.speeds))),
      col((s) => s.job.topologyLevel),
      col((s) => s.job.tpuShape),
      col((s) => s.job.expectedRuntimeSeconds),
      col((s) => JSON.stringify(s.job.template)),
      col((s) => s.idempotency?.key ?? null),
      col((s) => s.actor),
      col((s) => s.idempotency?.requestHash ?? null),
      col((s) => (s.job.checkpoint === undefined || s.job.checkpoint === null ? null : JSON.stringify(s.job.checkpoint))),
      col((s) => keyScope(s)),
      col((s) => s.job.priorityClass ?? null),
      col((s) => (s.job.roles === undefined || s.job.roles === null ? null : JSON.stringify(s.job.roles))),
      col((s) => s.job.namespace ?? null),
      col((s) => s.job.createdByToken ?? null),
    ] });
    return rows;
  }

  private async outcome(s: Submission, row: GroupRow): Promise<SubmitResult> {
    if (!row.team_ok || !row.flavors_ok) return { kind: 'unknown-references', team: !row.team_ok, flavors: !row.flavors_ok };
    if (row.id !== null) {
      const record = newRecord(row.id, s, row.submitted_at!, row.queued_at!);
      return {
        kind: 'created',
        job: { ...record, allocation: [], transitions: [{ from: null, to: 'PENDING', at: record.submittedAt, reason: 'submitted' }] },
      };
    }
    // The key was taken: by the same request (replay) or by another one (conflict).
    const prior = await this.prior(s.actor, s.idempotency!);
    if (prior === null) throw new Error('an Idempotency-Key vanished between its claim and its read');
    return prior;
  }

  /**
   * What an earlier submission under this Idempotency-Key answers: the same request's job (`replayed`), or
   * `key-reused` for another request; null when the key is not taken.
   */
  async prior(actor: string, key: IdempotencyClaim): Promise<Extract<SubmitResult, { kind: 'replayed' | 'key-reused' }> | null> {
    const prior = await this.db.pool.query<{ request_hash: string; job_id: string }>(
      'SELECT request_hash, job_id FROM idempotency_keys WHERE subject = $1 AND key = $2',
      [key.scope ?? actor, key.key],
    );
    const found = prior.rows[0];
    if (!found) return null;
    if (found.request_hash !== key.requestHash) return { kind: 'key-reused', jobId: found.job_id };
    const existing = await this.load(found.job_id);
    if (!existing) throw new Error(`job ${found.job_id} of an Idempotency-Key does not exist`);
    return { kind: 'replayed', job: existing };
  }
}

const keyScope = (s: Submission): string | null => (s.idempotency === null ? null : (s.idempotency.scope ?? s.actor));

/** The stored row of a job just inserted: the submission plus the column defaults of `jobs`. */
function newRecord(id: string, s: Submission, submittedAt: Date, queuedAt: Date): JobRecord {
  return {
    ...s.job,
    checkpoint: s.job.checkpoint ?? null,
    roles: s.job.roles ?? null,
    namespace: s.job.namespace ?? null,
    priorityClass: s.job.priorityClass ?? null,
    id,
    state: 'PENDING',
    flavor: null,
    admittedReplicas: null,
    pendingCode: null,
    pendingMessage: null,
    pendingPosition: null,
    pendingEstimatedStartAt: null,
    heldBy: null,
    heldAt: null,
    heldByAdmin: false,
    preemptedBy: null,
    preemptionCount: 0,
    submittedAt,
    queuedAt,
    admittedAt: null,
    startedAt: null,
    finishedAt: null,
    createdBy: s.actor,
    version: 0,
    lastCheckpointAt: null,
    completedFraction: null,
  };
}
