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
}
