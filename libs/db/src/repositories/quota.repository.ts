import { inTransaction, type DbHandle } from './db-handle.js';
import type { QuotaRecord } from './tenancy.records.js';
import { toQuotaRecord, type QuotaRow } from './team.repository.js';

export interface QuotaChange {
  before: QuotaRecord | null;
  after: QuotaRecord | null;
  /** Id of the audit event written in the same transaction. */
  eventId: string;
}

const SELECT_FOR_UPDATE =
  'SELECT team, flavor, nominal, borrowing_limit, lending_limit FROM quotas WHERE team = $1 AND flavor = $2 FOR UPDATE';

const limit = (n: number | null): string => (n === null ? 'unlimited' : String(n));
const describe = (q: QuotaRecord | null): string =>
  q === null ? 'none' : `nominal ${q.nominal}, borrowing ${limit(q.borrowingLimit)}, lending ${limit(q.lendingLimit)}`;

/**
 * Quotas. Every change writes an audit Event (kind quota.created / quota.updated / quota.deleted) with
 * who, when, before and after, in the same transaction as the change.
 */
export class QuotaRepository {
  constructor(private readonly db: DbHandle) {}

  /** Throws the pg foreign-key error (23503) when the team or flavor does not exist. */
  async put(q: QuotaRecord, actor: string): Promise<QuotaChange> {
    return inTransaction(this.db.pool, async (client) => {
      // Insert first: a SELECT … FOR UPDATE locks nothing while the row does not exist, so concurrent
      // creations each saw "none" and each wrote quota.created. A concurrent INSERT waits for the first
      // to commit and then finds the row, which it locks and reads as its true `before`.
      const values = [q.team, q.flavor, q.nominal, q.borrowingLimit, q.lendingLimit];
      let before: QuotaRecord | null = null;
      let rows: QuotaRow[] = [];
      // Loops only when the row is deleted between the two statements.
      while (rows.length === 0) {
        ({ rows } = await client.query<QuotaRow>(
          `INSERT INTO quotas (team, flavor, nominal, borrowing_limit, lending_limit, updated_at) VALUES ($1, $2, $3, $4, $5, now())
           ON CONFLICT (team, flavor) DO NOTHING
           RETURNING team, flavor, nominal, borrowing_limit, lending_limit`,
          values,
        ));
        if (rows.length > 0) break;
        const prior = await client.query<QuotaRow>(SELECT_FOR_UPDATE, [q.team, q.flavor]);
        if (!prior.rows[0]) continue;
        before = toQuotaRecord(prior.rows[0]);
        ({ rows } = await client.query<QuotaRow>(
          `UPDATE quotas SET nominal = $3, borrowing_limit = $4, lending_limit = $5, updated_at = now() WHERE team = $1 AND flavor = $2
           RETURNING team, flavor, nominal, borrowing_limit, lending_limit`,
          values,
        ));
      }
      const after = toQuotaRecord(rows[0]!);
      const kind = before === null ? 'quota.created' : 'quota.updated';
      const message = `quota of team ${q.team} for ${q.flavor} set by ${actor}: ${describe(before)} → ${describe(after)}`;
      const eventId = await insertEvent(client, kind, q.team, actor, message, { flavor: q.flavor, before, after });
      return { before, after, eventId };
    });
  }

  /** Null when there was no such quota (nothing written). */
  async delete(team: string, flavor: string, actor: string): Promise<QuotaChange | null> {
    return inTransaction(this.db.pool, async (client) => {
      const prior = await client.query<QuotaRow>(SELECT_FOR_UPDATE, [team, flavor]);
      if (!prior.rows[0]) return null;
      const before = toQuotaRecord(prior.rows[0]);
      await client.query('DELETE FROM quotas WHERE team = $1 AND flavor = $2', [team, flavor]);
      const message = `quota of team ${team} for ${flavor} deleted by ${actor}: ${describe(before)} → none`;
      const eventId = await insertEvent(client, 'quota.deleted', team, actor, message, { flavor, before, after: null });
      return { before, after: null, eventId };
    });
  }
}

async function insertEvent(
  client: { query: (sql: string, values: unknown[]) => Promise<{ rows: { id: string }[] }> },
  kind: string,
  team: string,
  actor: string,
  message: string,
  data: unknown,
): Promise<string> {
  const { rows } = await client.query(
    'INSERT INTO events (kind, team, actor, message, data) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id::text AS id',
    [kind, team, actor, message, JSON.stringify(data)],
  );
  return rows[0]!.id;
}
