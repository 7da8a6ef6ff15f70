import { GroupBatcher } from '../group-batcher.js';
import type { SqlHandle } from './sql-handle.js';

/** One row of the transactional outbox, as the relay and the workers see it. */
export interface OutboxRecord {
  id: string;
  kind: string;
  payload: unknown;
  status: 'pending' | 'done' | 'failed';
  attempts: number;
  availableAt: Date;
}

export interface OutboxRef {
  id: string;
  kind: string;
  /** When the entry became due (listDue fills it; used to find entries stuck in a damaged queue). */
  availableAt?: Date;
}

/** The outbox table's reads and status changes (entries are written only by the transition writer). */
export class OutboxRepository {
  constructor(private readonly db: SqlHandle) {}

  /** Pending entries whose `availableAt` has passed, oldest first, ids greater than `afterId`. */
  async listDue(now: Date, limit: number, afterId?: string): Promise<OutboxRef[]> {
    const { rows } = await this.db.pool.query<{ id: string; kind: string; available_at: Date }>(
      `SELECT id::text AS id, kind, available_at FROM outbox
       WHERE status = 'pending' AND available_at <= $1 AND id > $2::bigint
       ORDER BY id LIMIT $3`,
      [now, afterId ?? '0', limit],
    );
    return rows.map((r) => ({ id: r.id, kind: r.kind, availableAt: r.available_at }));
  }

  /** Busy workers read entries (and mark them done) a group per statement; see GroupBatcher. */
  private readonly reads = new GroupBatcher<string, OutboxRecord | null>((ids) => this.readMany(ids));
  private readonly dones = new GroupBatcher<string, void>(async (ids) => {
    await this.db.pool.query(`UPDATE outbox SET status = 'done', done_at = now(), attempts = attempts + 1 WHERE id = ANY($1::bigint[]) AND status <> 'done'`, [ids]);
    return ids.map(() => undefined);
  });

  get(id: string): Promise<OutboxRecord | null> {
    return this.reads.call(id);
  }

  private async readMany(ids: readonly string[]): Promise<(OutboxRecord | null)[]> {
    const { rows } = await this.db.pool.query<{ id: string; kind: string; payload: unknown; status: OutboxRecord['status']; attempts: number; available_at: Date }>(
      `SELECT id::text AS id, kind, payload, status, attempts, available_at FROM outbox WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, { id: r.id, kind: r.kind, payload: r.payload, status: r.status, attempts: r.attempts, availableAt: r.available_at }]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Which of `ids` are still pending (one read, for the relay's repair). */
  async stillPending(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.db.pool.query<{ id: string }>(
      `SELECT id::text AS id FROM outbox WHERE id = ANY($1::bigint[]) AND status = 'pending'`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Marks the entry done (idempotent). */
  markDone(id: string): Promise<void> {
    return this.dones.call(id);
  }

  /** A failed attempt: `retryAt` set keeps it pending until then; null makes it `failed` for good. */
  async recordFailure(id: string, error: string, retryAt: Date | null): Promise<void> {
    await this.db.pool.query(
      `UPDATE outbox SET attempts = attempts + 1, last_error = left($2, 2000),
              status = CASE WHEN $3::timestamptz IS NULL THEN 'failed'::outbox_status ELSE status END,
              available_at = COALESCE($3::timestamptz, available_at)
       WHERE id = $1::bigint AND status = 'pending'`,
      [id, error, retryAt],
    );
  }
}
