import type { Pool, PoolClient } from 'pg';
import { FencingError, inTransaction } from '#db';
import type { RequeuedJob, ReconcileStore } from '../reconciler.js';
import type { JobStateCount } from '../scheduler-metrics.js';
import type { PgCycleLock } from './pg-cycle-lock.js';

/** Reason prefix of the transition written when a gang did not start in time (also counts requeues). */
export const GANG_TIMEOUT_REASON = 'gang-timeout';

/**
 * Reconcile's writes. Each runs under the cycle lock, so it never interleaves with a cycle's
 * load → commit, and the requeue checks the fencing token like a commit does.
 *
 * Backoff of a requeued gang: its `queued_at` is set to the not-before time, and the cycle store leaves
 * jobs whose `queued_at` lies in the future out of the snapshot (ordering uses `submitted_at`, so the
 * job keeps its place once it is eligible again).
 */
export class PgReconcileStore implements ReconcileStore {
  constructor(
    private readonly pool: Pool,
    private readonly lock: PgCycleLock,
  ) {}

  async releaseEndedAllocations(): Promise<number> {
    return this.lock.withLock(async () => {
      const { rowCount } = await this.pool.query(
        `DELETE FROM allocations a USING jobs j
         WHERE a.job_id = j.id AND j.state NOT IN ('ADMITTED', 'BINDING', 'RUNNING')`,
      );
      return rowCount ?? 0;
    });
  }

  async requeueStuckAdmissions(input: Parameters<ReconcileStore['requeueStuckAdmissions']>[0]): Promise<RequeuedJob[]> {
    return this.lock.withLock(() => inTransaction(this.pool, async (client) => {
      await assertFencing(client, input.fencing);
      const { rows } = await client.query<{ id: string; team: string; state: string; requeues: number }>(
        `SELECT j.id, j.team, j.state::text AS state,
                (SELECT count(*)::int FROM job_transitions t WHERE t.job_id = j.id AND t.reason LIKE $2) AS requeues
         FROM jobs j
         WHERE j.state IN ('ADMITTED', 'BINDING') AND j.admitted_at < $1
         ORDER BY j.admitted_at, j.id
         FOR UPDATE OF j`,
        [input.admittedBefore, `${GANG_TIMEOUT_REASON}%`],
      );
      const out: RequeuedJob[] = [];
      for (const row of rows) {
        const requeues = row.requeues + 1;
        const notBefore = new Date(input.now.getTime() + input.backoffMs(requeues));
        const reason = `${GANG_TIMEOUT_REASON}: admitted but not RUNNING within the gang timeout; requeue #${requeues}, not before ${notBefore.toISOString()}`;
        await client.query('DELETE FROM allocations WHERE job_id = $1', [row.id]);
        await client.query(
          `UPDATE jobs SET state = 'PENDING', flavor = NULL, admitted_replicas = NULL, admitted_at = NULL, started_at = NULL, queued_at = $2,
                  pending_code = NULL, pending_message = $3, pending_position = NULL, pending_estimated_start_at = $2,
                  version = version + 1, updated_at = $4
           WHERE id = $1`,
          [row.id, notBefore, reason, input.now],
        );
        await client.query(`INSERT INTO job_transitions (job_id, "from", "to", at, reason) VALUES ($1, $2::job_state, 'PENDING', $3, $4)`, [row.id, row.state, input.now, reason]);
        await client.query(
          `INSERT INTO events (at, kind, job_id, team, actor, message, data) VALUES ($1, 'job.requeued', $2, $3, 'scheduler', $4, $5::jsonb)`,
          [input.now, row.id, row.team, reason, JSON.stringify({ requeues, notBefore: notBefore.toISOString() })],
        );
        // Whatever was started for it (pods bound in Kubernetes) goes away; standalone acknowledges.
        await client.query(
          `INSERT INTO outbox (kind, payload, dedupe_key) VALUES ('delete', $1::jsonb, $2) ON CONFLICT (dedupe_key) DO NOTHING`,
          [JSON.stringify({ jobId: row.id }), `requeue:${row.id}:${requeues}`],
        );
        out.push({ jobId: row.id, requeues, notBefore });
      }
      return out;
    }));
  }

  async countJobs(): Promise<JobStateCount[]> {
    const { rows } = await this.pool.query<{ state: string; team: string; flavor: string; count: number }>(
      `SELECT state::text AS state, team, COALESCE(flavor, flavors[1], '') AS flavor, count(*)::int AS count
       FROM jobs WHERE state IN ('PENDING', 'ADMITTED', 'BINDING', 'RUNNING')
       GROUP BY 1, 2, 3`,
    );
    return rows;
  }

}

async function assertFencing(client: PoolClient, fencing: { leaseName: string; token: bigint }): Promise<void> {
  // FOR UPDATE, like commitCycle: a takeover waits for this transaction, then bumps the token.
  const { rows } = await client.query<{ holder: string; fencing_token: string }>(
    'SELECT holder, fencing_token::text AS fencing_token FROM scheduler_leases WHERE name = $1 FOR UPDATE',
    [fencing.leaseName],
  );
  const row = rows[0];
  if (!row || BigInt(row.fencing_token) !== fencing.token) {
    throw new FencingError(fencing.leaseName, fencing.token, row ? { holder: row.holder, fencingToken: BigInt(row.fencing_token) } : null);
  }
}
