import type { DbHandle } from './db-handle.js';

/** The scheduler's committed cycles in one time bucket [at, at + step). */
export interface CycleBucket {
  at: Date;
  cycles: number;
  admitted: number;
  preempted: number;
  /** Longest cycle in the bucket, ms (0 when there was none). */
  maxDurationMs: number;
}

/** Admissions, preemptions and cycles over time, from scheduler_cycles (indexed by started_at). */
export class CycleHistoryRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Buckets of `stepSeconds` from the one holding `since` to the one holding `until`, every bucket present
   * (zeros where no cycle ran), oldest first.
   */
  async buckets(since: Date, until: Date, stepSeconds: number): Promise<CycleBucket[]> {
    const { rows } = await this.db.pool.query<{
      at: Date;
      cycles: number;
      admitted: number;
      preempted: number;
      max_ms: number;
    }>(
      `WITH b AS (
         SELECT generate_series(date_bin(make_interval(secs => $3), $1::timestamptz, 'epoch'), $2::timestamptz, make_interval(secs => $3)) AS at)
       SELECT b.at, count(c.id)::int AS cycles, COALESCE(sum(c.admitted), 0)::int AS admitted,
              COALESCE(sum(c.preempted), 0)::int AS preempted, COALESCE(max(c.duration_ms), 0)::int AS max_ms
       FROM b LEFT JOIN scheduler_cycles c ON c.started_at >= b.at AND c.started_at < b.at + make_interval(secs => $3)
       GROUP BY b.at ORDER BY b.at`,
      [since, until, stepSeconds],
    );
    return rows.map((r) => ({
      at: r.at,
      cycles: r.cycles,
      admitted: r.admitted,
      preempted: r.preempted,
      maxDurationMs: r.max_ms,
    }));
  }
}
