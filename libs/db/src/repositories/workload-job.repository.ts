import type { JobState } from '#core';
import type { DbHandle } from './db-handle.js';

/** A job made from a Kubernetes workload (its template's `workload`, set when the gang was imported). */
export interface WorkloadJobRecord {
  id: string;
  state: JobState;
  /** The workload reference as stored: { apiVersion, kind, namespace, name, uid }. */
  workload: Record<string, unknown>;
}

/** Reads of the jobs that stand for Kubernetes workloads (Job, JobSet, TrainJob, RayCluster/RayJob, LeaderWorkerSet). */
export class WorkloadJobRepository {
  constructor(private readonly db: DbHandle) {}

  /** Workload jobs that are not finished: their workload's status and existence are watched. */
  async active(): Promise<WorkloadJobRecord[]> {
    const { rows } = await this.db.pool.query<{
      id: string;
      state: JobState;
      workload: Record<string, unknown>;
    }>(
      `SELECT id::text AS id, state::text AS state, template->'workload' AS workload FROM jobs
       WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND template ? 'workload'`,
    );
    return rows;
  }

  /**
   * How the job last lost an allocation — the latest move out of ADMITTED, BINDING or RUNNING (`to` PREEMPTED or
   * PENDING, with its reason) — or null when it never held one.
   */
  async lastRelease(jobId: string): Promise<{ to: JobState; reason: string } | null> {
    const { rows } = await this.db.pool.query<{ to: JobState; reason: string }>(
      `SELECT "to"::text AS "to", reason FROM job_transitions
       WHERE job_id = $1 AND "from" IN ('ADMITTED', 'BINDING', 'RUNNING') AND "to" IN ('PREEMPTED', 'PENDING')
       ORDER BY id DESC LIMIT 1`,
      [jobId],
    );
    return rows[0] ?? null;
  }
}
