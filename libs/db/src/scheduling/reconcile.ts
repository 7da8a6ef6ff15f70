import { inTransaction } from '../repositories/db-handle.js';
import { moveJobs, type JobMove } from '../lifecycle/transition-writer.js';
import { assertFencing } from './fencing.js';
import type { SqlHandle } from './sql-handle.js';

/** Reason prefix of the transition written when a gang did not start in time (also counts requeues). */
export const GANG_TIMEOUT_REASON = 'gang-timeout';

/** Deletes allocations of jobs that no longer hold (ended, pending, preempted). Returns rows deleted. */
export async function releaseEndedAllocations(db: SqlHandle): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM allocations a USING jobs j
     WHERE a.job_id = j.id AND j.state NOT IN ('ADMITTED', 'BINDING', 'RUNNING')`,
  );
  return rowCount ?? 0;
}

export interface StuckAdmissionsInput {
  now: Date;
  admittedBefore: Date;
  backoffMs: (requeues: number) => number;
  fencing: { leaseName: string; token: bigint };
}

/**
 * ADMITTED/BINDING jobs admitted before `admittedBefore` go back to PENDING through the transition writer
 * (allocation released, transition, `job.requeued` event, `delete` outbox entry), not schedulable before
 * `backoffMs(requeues)` from `now`: their `queued_at` is that not-before time. Fenced like a cycle commit.
 */
export async function requeueStuckAdmissions(
  db: SqlHandle,
  input: StuckAdmissionsInput,
): Promise<{ jobId: string; requeues: number; notBefore: Date }[]> {
  return inTransaction(db.pool, async (client) => {
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
    const out: { jobId: string; requeues: number; notBefore: Date }[] = [];
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
  });
}

/** Non-terminal jobs by state, team and flavor (admitted flavor, else the first acceptable), for metrics. */
export async function countActiveJobs(db: SqlHandle): Promise<{ state: string; team: string; flavor: string; count: number }[]> {
  const { rows } = await db.pool.query<{ state: string; team: string; flavor: string; count: number }>(
    `SELECT state::text AS state, team, COALESCE(flavor, flavors[1], '') AS flavor, count(*)::int AS count
     FROM jobs WHERE state IN ('PENDING', 'ADMITTED', 'BINDING', 'RUNNING')
     GROUP BY 1, 2, 3`,
  );
  return rows;
}
