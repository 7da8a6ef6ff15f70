import type { JobState } from '#core';
import { inTransaction, type DbHandle } from './db-handle.js';
import { moveJobs, type JobMove } from '../lifecycle/transition-writer.js';

/** A job a drain requeued (or, in a dry run, would). */
export interface DrainedJob {
  id: string;
  name: string;
  team: string;
  /** The state it left. */
  from: JobState;
}

export type DrainOutcome =
  | { outcome: 'missing' }
  /** A node synced from Kubernetes: drained there (kubectl drain), never here. */
  | { outcome: 'kubernetes' }
  | { outcome: 'drained'; cordoned: boolean; jobs: DrainedJob[] };

interface HolderRow {
  id: string;
  name: string;
  team: string;
  state: JobState;
  version: number;
  lost_since: Date | null;
}

/**
 * Node drain (Slurm's `scontrol update state=drain` followed by a requeue; `kubectl drain` for a cluster without
 * Kubernetes sync): the node is cordoned (schedulable false, a `node.updated` audit entry) and every job holding
 * an allocation on it is requeued through the transition writer as a preemption is — through PREEMPTED, evicted with
 * its checkpoint grace period, the work after its last checkpoint (or since admission) counted as wasted — all in
 * one transaction. The scheduler then places the jobs elsewhere, never on the cordoned node.
 */
export class NodeDrainRepository {
  constructor(private readonly db: DbHandle) {}

  async drain(name: string, actor: string, dryRun = false): Promise<DrainOutcome> {
    return inTransaction(this.db.pool, async (client) => {
      const node = await client.query<{ schedulable: boolean; source: string }>(`SELECT schedulable, source::text AS source FROM nodes WHERE name = $1 FOR UPDATE`, [name]);
      const row = node.rows[0];
      if (row === undefined) return { outcome: 'missing' };
      if (row.source === 'kubernetes') return { outcome: 'kubernetes' };
      const { rows: holders } = await client.query<HolderRow>(
        `SELECT DISTINCT j.id::text AS id, j.name, j.team, j.state::text AS state, j.version,
                CASE WHEN j.checkpoint IS NOT NULL THEN COALESCE(j.last_checkpoint_at, j.admitted_at) ELSE j.admitted_at END AS lost_since
         FROM allocations a JOIN jobs j ON j.id = a.job_id
         WHERE a.node = $1 AND j.state IN ('ADMITTED', 'BINDING', 'RUNNING')
         ORDER BY j.team, j.name, id`,
        [name],
      );
      const jobs = (rs: readonly HolderRow[]): DrainedJob[] => rs.map((h) => ({ id: h.id, name: h.name, team: h.team, from: h.state }));
      if (dryRun) return { outcome: 'drained', cordoned: row.schedulable, jobs: jobs(holders) };
      if (row.schedulable) {
        await client.query(`UPDATE nodes SET schedulable = false, updated_at = now() WHERE name = $1`, [name]);
        await client.query(`INSERT INTO events (kind, actor, message, data) VALUES ('node.updated', $1, $2, $3)`, [
          actor,
          `node ${name} cordoned by ${actor} (drain)`,
          JSON.stringify({ node: name, before: { schedulable: true }, after: { schedulable: false } }),
        ]);
      }
      const reason = `node ${name} drained by ${actor}; requeued`;
      const moves: JobMove[] = holders.map((h) => ({
        jobId: h.id,
        to: 'PENDING',
        via: 'PREEMPTED',
        from: ['ADMITTED', 'BINDING', 'RUNNING'],
        version: h.version,
        reason,
        requeue: { pendingMessage: reason },
        event: { kind: 'job.requeued', message: reason, data: { cause: 'drain', node: name } },
        effects: [{ kind: 'evict' }, { kind: 'notify', payload: { event: 'requeued' } }],
        ...(h.lost_since === null ? {} : { lostSince: h.lost_since }),
      }));
      const { results } = await moveJobs(client, moves, { actor });
      const moved = new Set(results.filter((r) => r.moved).map((r) => r.jobId));
      return { outcome: 'drained', cordoned: row.schedulable, jobs: jobs(holders.filter((h) => moved.has(h.id))) };
    });
  }
}
