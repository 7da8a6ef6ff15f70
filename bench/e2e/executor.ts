import type pg from 'pg';
import { moveJobs } from '#db';

/**
 * The bench's stand-in for external executors: every job admitted more than `runMs` ago finishes
 * (ADMITTED → SUCCEEDED through the transition writer: allocation released, transition, event, `delete`
 * outbox entry — what POST /v1/jobs/{id}/status writes), straight in Postgres so that the load on the
 * API is the submissions alone.
 */
export async function finishAdmitted(db: pg.Pool, runMs: number): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text AS id FROM jobs WHERE state = 'ADMITTED' AND admitted_at < now() - make_interval(secs => $1::float8 / 1000)`,
    [runMs],
  );
  if (rows.length === 0) return 0;
  const { results } = await moveJobs(
    db,
    rows.map((r) => ({ jobId: r.id, from: ['ADMITTED'] as const, to: 'SUCCEEDED' as const, reason: 'bench executor' })),
    { actor: 'bench executor' },
  );
  return results.filter((r) => r.moved).length;
}
