import type { DbHandle } from './db-handle.js';

export interface SchedulerStatus {
  leader: { holder: string; fencingToken: string; renewedAt: Date; expiresAt: Date; live: boolean } | null;
  lastCycle: { number: string; startedAt: Date; durationMs: number; admitted: number; preempted: number; pending: number } | null;
  pendingCount: number;
}

/** Read-only view of the scheduler's lease, last committed cycle and queue length (GET /v1/scheduler, /readyz). */
export class SchedulerStateRepository {
  constructor(private readonly db: DbHandle) {}

  async status(): Promise<SchedulerStatus> {
    const { rows } = await this.db.pool.query<{
      holder: string | null;
      fencing_token: string | null;
      renewed_at: Date | null;
      expires_at: Date | null;
      live: boolean | null;
      number: string | null;
      started_at: Date | null;
      duration_ms: number | null;
      admitted: number | null;
      preempted: number | null;
      pending: number | null;
      pending_count: number;
    }>(
      `SELECT l.holder, l.fencing_token::text AS fencing_token, l.renewed_at, l.expires_at, (l.expires_at > now()) AS live,
              c.number::text AS number, c.started_at, c.duration_ms, c.admitted, c.preempted, c.pending,
              (SELECT count(*)::int FROM jobs WHERE state = 'PENDING') AS pending_count
       FROM (SELECT 1) AS one
       LEFT JOIN LATERAL (SELECT * FROM scheduler_leases ORDER BY renewed_at DESC LIMIT 1) l ON true
       LEFT JOIN LATERAL (SELECT * FROM scheduler_cycles ORDER BY id DESC LIMIT 1) c ON true`,
    );
    const r = rows[0]!;
    return {
      leader:
        r.holder === null
          ? null
          : { holder: r.holder, fencingToken: r.fencing_token!, renewedAt: r.renewed_at!, expiresAt: r.expires_at!, live: r.live === true },
      lastCycle:
        r.number === null
          ? null
          : { number: r.number, startedAt: r.started_at!, durationMs: r.duration_ms!, admitted: r.admitted!, preempted: r.preempted!, pending: r.pending! },
      pendingCount: r.pending_count,
    };
  }
}
