import type { Pool, PoolClient } from 'pg';
import { FencingError, inTransaction, moveJobs, type JobMove } from '#db';
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
      const { rows } = await client.query<{ id: string; requeues: number }>(
        `SELECT j.id,
                (SELECT count(*)::int FROM job_transitions t WHERE t.job_id = j.id AND t.reason LIKE $2) AS requeues
         FROM jobs j
         WHERE j.state IN ('ADMITTED', 'BINDING') AND j.admitted_at < $1
         ORDER BY j.admitted_at, j.id
         FOR UPDATE OF j`,
        [input.admittedBefore, `${GANG_TIMEOUT_REASON}%`],
      );
      const out: RequeuedJob[] = [];
      const moves: JobMove[] = [];
      for (const row of rows) {
        const requeues = row.requeues + 1;
        const notBefore = new Date(input.now.getTime() + input.backoffMs(requeues));
        const reason = `${GANG_TIMEOUT_REASON}: admitted but not RUNNING within the gang timeout; requeue #${requeues}, not before ${notBefore.toISOString()}`;
        moves.push({
          jobId: row.id,
          to: 'PENDING',
          from: ['ADMITTED', 'BINDING'],
          reason,
          requeue: { queuedAt: notBefore, pendingMessage: reason, estimatedStartAt: notBefore },
          event: { kind: 'job.requeued', message: reason, data: { requeues, notBefore: notBefore.toISOString() } },
          // Whatever was started for it (pods bound in Kubernetes) goes away; standalone acknowledges.
          effects: [{ kind: 'delete' }],
        });
        out.push({ jobId: row.id, requeues, notBefore });
      }
      await moveJobs(client, moves, { at: input.now });
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
