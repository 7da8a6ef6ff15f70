import { inTransaction, type DbHandle } from './db-handle.js';
import { writeTenancyEvent, type CohortRecord, type Deletion, type Upserted } from './tenancy.records.js';

/** What keeps a cohort from being deleted: its member teams. */
export interface CohortUse {
  members: string[];
}

interface CohortRow {
  name: string;
  description: string;
  members: string[];
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

const toRecord = (r: CohortRow): CohortRecord => ({
  name: r.name,
  description: r.description,
  members: r.members,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const SELECT = `SELECT c.name, c.description, c.created_at, c.updated_at,
  COALESCE((SELECT array_agg(t.name ORDER BY t.name) FROM teams t WHERE t.cohort = c.name), '{}') AS members FROM cohorts c`;

export class CohortRepository {
  constructor(private readonly db: DbHandle) {}

  async upsert(name: string, description: string): Promise<Upserted<CohortRecord>> {
    const { rows } = await this.db.pool.query<{ created: boolean }>(
      `INSERT INTO cohorts (name, description, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, updated_at = now()
       RETURNING (xmax = 0) AS created`,
      [name, description],
    );
    const record = await this.get(name);
    return { record: record!, created: rows[0]?.created === true };
  }

  async list(): Promise<CohortRecord[]> {
    const { rows } = await this.db.pool.query<CohortRow>(`${SELECT} ORDER BY c.name`);
    return rows.map(toRecord);
  }

  async get(name: string): Promise<CohortRecord | null> {
    const { rows } = await this.db.pool.query<CohortRow>(`${SELECT} WHERE c.name = $1`, [name]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async exists(name: string): Promise<boolean> {
    const { rowCount } = await this.db.pool.query('SELECT 1 FROM cohorts WHERE name = $1', [name]);
    return rowCount === 1;
  }

  /**
   * Deletes a cohort without member teams and writes a cohort.deleted event, in one transaction. A team
   * joining it meanwhile waits for the row lock and then fails on the foreign key (or is seen by the check).
   */
  async delete(name: string, actor: string): Promise<Deletion<CohortUse>> {
    return inTransaction(this.db.pool, async (client) => {
      const cohort = await client.query('SELECT 1 FROM cohorts WHERE name = $1 FOR UPDATE', [name]);
      if (cohort.rowCount !== 1) return { outcome: 'missing' };
      const { rows } = await client.query<{ name: string }>('SELECT name FROM teams WHERE cohort = $1 ORDER BY name', [name]);
      if (rows.length > 0) return { outcome: 'in-use', use: { members: rows.map((r) => r.name) } };
      await client.query('DELETE FROM cohorts WHERE name = $1', [name]);
      const eventId = await writeTenancyEvent(client, 'cohort.deleted', null, actor, `cohort ${name} deleted by ${actor}`, { cohort: name });
      return { outcome: 'deleted', eventId };
    });
  }
}
