import type pg from 'pg';

/**
 * The bench's stand-in for external executors: every job admitted more than `runMs` ago finishes
 * (ADMITTED → SUCCEEDED, allocation released, transition, `delete` outbox entry — what
 * POST /v1/jobs/{id}/status writes), straight in Postgres so that the load on the API is the
 * submissions alone.
 */
export async function finishAdmitted(db: pg.Pool, runMs: number): Promise<number> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ id: string }>(
      `UPDATE jobs SET state = 'SUCCEEDED', finished_at = now(), version = version + 1
       WHERE id IN (SELECT id FROM jobs WHERE state = 'ADMITTED' AND admitted_at < now() - make_interval(secs => $1::float8 / 1000)
                    FOR UPDATE SKIP LOCKED)
       RETURNING id::text AS id`,
      [runMs],
    );
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) {
      await client.query('DELETE FROM allocations WHERE job_id = ANY($1::uuid[])', [ids]);
      await client.query(`INSERT INTO job_transitions (job_id, "from", "to", reason) SELECT unnest($1::uuid[]), 'ADMITTED', 'SUCCEEDED', 'bench executor'`, [ids]);
      await client.query(
        `INSERT INTO outbox (kind, payload, dedupe_key) SELECT 'delete', jsonb_build_object('jobId', id), 'delete:' || id FROM unnest($1::text[]) id ON CONFLICT DO NOTHING`,
        [ids],
      );
    }
    await client.query('COMMIT');
    return ids.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
