import type { JobState, PendingCode } from '#core';
import { GroupBatcher } from '../group-batcher.js';
import type { SqlHandle } from '../scheduling/sql-handle.js';
import { UUID } from '../uuid.js';
import { JOB_PODS_NAMESPACE } from './extender.js';

/** A job as the Kubernetes bind handler needs it: the row, its flavor, allocation, nodes and neighbours. */
export interface BindTargetRow {
  id: string;
  name: string;
  team: string;
  priority: number;
  state: JobState;
  accelerators_per_replica: number;
  template: Record<string, unknown>;
  /** Seconds the job's checkpoint policy gives it to checkpoint when evicted (null: it does not checkpoint). */
  checkpoint_grace: number | null;
  flavor: string | null;
  resource_name: string | null;
  node_labels: Record<string, string> | null;
  preempted_jobs: string[];
  /** admitted_at in epoch ms, as text (identifies the current admission). */
  admission: string | null;
  /** `role`: the replica's role in a multi-role job, else null. */
  allocations: { replica: number; node: string; accelerators: number; cpuMillis: number; memoryMiB: number; role: string | null }[];
  nodes: { name: string; accelerators: number; cpuMillis: number; memoryMiB: number; schedulable: boolean }[];
  neighbours: { job: string; replica: number; node: string }[];
  /** Its team's pod policy as stored (null: never set, nothing allowed); read with podPolicyOf. */
  pod_policy: unknown;
  /** The namespace its pods are made in (JOB_PODS_NAMESPACE; null: the scheduler's QM_KUBE_NAMESPACE). */
  namespace: string | null;
  /** Ids of its `delete` and `evict` outbox entries still pending while it holds: an earlier admission's (RELEASING_SQL). */
  releasing: string[];
}

/**
 * The pending `delete` and `evict` outbox entries of a job that holds an allocation. Such an entry was written
 * when an earlier admission was released (a requeue, a preemption, the first half of a move): every release of
 * the current admission would have taken the job out of the holding states. Looked up only for a job released
 * before (a job_transitions row out of a holding state), so a first admission's bind scans no outbox.
 */
const RELEASING_SQL = `
  CASE WHEN j.state IN ('ADMITTED', 'BINDING', 'RUNNING')
            AND EXISTS (SELECT 1 FROM job_transitions t WHERE t.job_id = j.id
                          AND t."from" IN ('ADMITTED', 'BINDING', 'RUNNING') AND t."to" IN ('PREEMPTED', 'PENDING'))
       THEN COALESCE((SELECT array_agg(o.id::text ORDER BY o.id) FROM outbox o
                      WHERE o.status = 'pending' AND o.kind IN ('delete', 'evict') AND o.payload ->> 'jobId' = j.id::text), '{}')
       ELSE '{}' END`;

/** What the waiting pods of a job should show. */
export interface WaitingJobRow {
  id: string;
  name: string;
  state: JobState;
  pendingCode: PendingCode | null;
  pendingMessage: string | null;
  pendingPosition: number | null;
  pendingEstimatedStartAt: Date | null;
  flavor: string | null;
  admittedReplicas: number | null;
  /** Replicas the job asks for. */
  replicas: number;
  /** Since when it waits: submission, or its latest requeue. */
  queuedAt: Date;
  /** When its current admission was made (null unless it holds one). */
  admittedAt: Date | null;
}

/** Kubernetes mode's reads of jobs (state changes go through the transition writer). */
/** What the pod phase sync reads of a job. */
export interface JobPodsState {
  state: JobState;
  replicas: number;
  imported: boolean;
  /** Its admission (ms since the epoch, as text), which Quartermaster's own pods carry; null when not admitted. */
  admission: string | null;
  /** The namespace of its pods (JOB_PODS_NAMESPACE; null: the scheduler's QM_KUBE_NAMESPACE). */
  namespace: string | null;
}

export class KubeJobsRepository {
  constructor(private readonly db: SqlHandle) {}

  /** Bind targets of these ids (null for unknown ids); concurrent callers read a group per statement. */
  bindTarget(jobId: string): Promise<BindTargetRow | null> {
    return this.targets.call(jobId);
  }

  private readonly targets = new GroupBatcher<string, BindTargetRow | null>(async (ids) => {
    const { rows } = await this.db.pool.query<BindTargetRow>(
      `SELECT j.id, j.name, j.team, j.priority, j.state::text AS state, j.accelerators_per_replica, j.template, j.flavor,
              (j.checkpoint ->> 'gracePeriodSeconds')::int AS checkpoint_grace, f.resource_name, f.node_labels, j.preempted_jobs::text[] AS preempted_jobs,
              (extract(epoch from j.admitted_at) * 1000)::bigint::text AS admission,
              COALESCE((SELECT json_agg(json_build_object('replica', a.replica, 'node', a.node, 'accelerators', a.accelerators,
                                                          'cpuMillis', a.cpu_millis, 'memoryMiB', a.memory_mib, 'role', a.role) ORDER BY a.replica)
                        FROM allocations a WHERE a.job_id = j.id), '[]') AS allocations,
              COALESCE((SELECT json_agg(json_build_object('name', n.name, 'accelerators', n.accelerators, 'cpuMillis', n.cpu_millis,
                                                          'memoryMiB', n.memory_mib, 'schedulable', n.schedulable))
                        FROM nodes n WHERE n.name IN (SELECT a.node FROM allocations a WHERE a.job_id = j.id)), '[]') AS nodes,
              COALESCE((SELECT json_agg(json_build_object('job', o.job_id, 'replica', o.replica, 'node', o.node))
                        FROM allocations o WHERE o.job_id <> j.id
                          AND o.node IN (SELECT a.node FROM allocations a WHERE a.job_id = j.id)), '[]') AS neighbours,
              t.pod_policy, ${JOB_PODS_NAMESPACE} AS namespace, ${RELEASING_SQL} AS releasing
       FROM jobs j LEFT JOIN flavors f ON f.name = j.flavor LEFT JOIN teams t ON t.name = j.team WHERE j.id = ANY($1::uuid[])`,
      [ids],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  });

  /** The namespace of each known job's pods (JOB_PODS_NAMESPACE; null: QM_KUBE_NAMESPACE); ids that are no job's are left out. */
  async podNamespaces(jobIds: readonly string[]): Promise<Map<string, string | null>> {
    const ids = [...new Set(jobIds.filter((id) => UUID.test(id)))];
    if (ids.length === 0) return new Map();
    const { rows } = await this.db.pool.query<{ id: string; namespace: string | null }>(
      `SELECT j.id::text AS id, ${JOB_PODS_NAMESPACE} AS namespace FROM jobs j WHERE j.id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.namespace]));
  }

  /** Every team's namespaces as stored (empty: the team's own name; libs/core teamNamespaces). */
  async teamNamespaces(): Promise<Map<string, string[]>> {
    const { rows } = await this.db.pool.query<{ name: string; namespaces: string[] | null }>('SELECT name, namespaces FROM teams');
    return new Map(rows.map((r) => [r.name, r.namespaces ?? []]));
  }

  /** What the waiting pods of these jobs should show (state and pending reason); unknown ids are left out. */
  async waitingJobs(ids: readonly string[]): Promise<WaitingJobRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.pool.query<WaitingSqlRow>(
      `SELECT ${WAITING_COLUMNS} FROM jobs WHERE id = ANY($1::uuid[])`,
      [ids.filter((id) => UUID.test(id))],
    );
    return rows.map(waitingRow);
  }

  /**
   * PENDING jobs of workloads that were preempted (at most `limit`, longest waiting first), with the workload
   * from their template: a suspended workload has no pods, so no pass of the importer sees it, yet it should
   * say why it still waits.
   */
  async preemptedWaitingWorkloads(limit: number): Promise<(WaitingJobRow & { workload: unknown })[]> {
    const { rows } = await this.db.pool.query<WaitingSqlRow & { workload: unknown }>(
      `SELECT ${WAITING_COLUMNS}, template -> 'workload' AS workload FROM jobs
       WHERE state = 'PENDING' AND preemption_count > 0 AND template ? 'workload'
       ORDER BY queued_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ ...waitingRow(r), workload: r.workload }));
  }

  /**
   * Why the job's pods are being evicted: its latest preemption (who preempted it and why) or move to a
   * faster flavor (`moved`), whichever came last; null when it was neither.
   */
  async evictionReason(jobId: string): Promise<{ moved: boolean; message: string } | null> {
    const { rows } = await this.db.pool.query<{ kind: string; message: string }>(
      `SELECT kind, message FROM events WHERE job_id = $1 AND kind IN ('job.preempted', 'job.moved') ORDER BY id DESC LIMIT 1`,
      [jobId],
    );
    const row = rows[0];
    return row === undefined ? null : { moved: row.kind === 'job.moved', message: row.message };
  }

  /**
   * The job an import under this Idempotency-Key made (subject `kubernetes`, as the importers submit), or null:
   * a workload already imported keeps its job when what it asks is refused today (a class lowered since).
   */
  async importedJobId(key: string): Promise<string | null> {
    const { rows } = await this.db.pool.query<{ job_id: string }>(
      `SELECT job_id FROM idempotency_keys WHERE subject = 'kubernetes' AND key = $1`,
      [key],
    );
    return rows[0]?.job_id ?? null;
  }

  /** Ids of the RUNNING jobs. */
  async runningJobs(): Promise<string[]> {
    const { rows } = await this.db.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE state = 'RUNNING'`);
    return rows.map((row) => row.id);
  }

  /**
   * State, admitted replica count, whether the job is an imported gang, and its current admission
   * (admitted_at in epoch ms as text, as BindTargetRow.admission; null before its first).
   */
  async state(jobId: string): Promise<JobPodsState | null> {
    const { rows } = await this.db.pool.query<JobPodsState>(
      `SELECT state::text AS state, COALESCE(admitted_replicas, (SELECT count(*)::int FROM allocations a WHERE a.job_id = j.id)) AS replicas,
              (template ? 'importedFrom') AS imported, (extract(epoch from admitted_at) * 1000)::bigint::text AS admission,
              ${JOB_PODS_NAMESPACE} AS namespace
       FROM jobs j WHERE id = $1`,
      [jobId],
    );
    return rows[0] ?? null;
  }
}

const WAITING_COLUMNS = `id::text AS id, name, state::text AS state, pending_code::text AS pending_code, pending_message, pending_position,
              pending_estimated_start_at, flavor, admitted_replicas, replicas, queued_at, admitted_at`;

interface WaitingSqlRow {
  id: string;
  name: string;
  state: JobState;
  pending_code: PendingCode | null;
  pending_message: string | null;
  pending_position: number | null;
  pending_estimated_start_at: Date | null;
  flavor: string | null;
  admitted_replicas: number | null;
  replicas: number;
  queued_at: Date;
  admitted_at: Date | null;
}

function waitingRow(r: WaitingSqlRow): WaitingJobRow {
  return {
    id: r.id,
    name: r.name,
    state: r.state,
    pendingCode: r.pending_code,
    pendingMessage: r.pending_message,
    pendingPosition: r.pending_position,
    pendingEstimatedStartAt: r.pending_estimated_start_at,
    flavor: r.flavor,
    admittedReplicas: r.admitted_replicas,
    replicas: r.replicas,
    queuedAt: r.queued_at,
    admittedAt: r.admitted_at,
  };
}
