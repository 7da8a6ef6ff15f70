import type { DbHandle } from './db-handle.js';
import type { QuotaRecord, TeamRecord, Upserted } from './tenancy.records.js';

interface TeamRow {
  name: string;
  cohort: string | null;
  fair_share_weight: number;
  within_team: TeamRecord['withinTeam'];
  reclaim_within_cohort: TeamRecord['reclaimWithinCohort'];
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

const COLUMNS = 'name, cohort, fair_share_weight, within_team, reclaim_within_cohort, created_at, updated_at';

const toRecord = (r: TeamRow): TeamRecord => ({
  name: r.name,
  cohort: r.cohort,
  fairShareWeight: r.fair_share_weight,
  withinTeam: r.within_team,
  reclaimWithinCohort: r.reclaim_within_cohort,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface QuotaRow {
  team: string;
  flavor: string;
  nominal: number;
  borrowing_limit: number | null;
  lending_limit: number | null;
}

export const toQuotaRecord = (r: QuotaRow): QuotaRecord => ({
  team: r.team,
  flavor: r.flavor,
  nominal: r.nominal,
  borrowingLimit: r.borrowing_limit,
  lendingLimit: r.lending_limit,
});

export type TeamInput = Omit<TeamRecord, 'name' | 'createdAt' | 'updatedAt'>;

export class TeamRepository {
  constructor(private readonly db: DbHandle) {}

  /** Throws the pg foreign-key error (23503) when the cohort does not exist. */
  async upsert(name: string, t: TeamInput): Promise<Upserted<TeamRecord>> {
    const { rows } = await this.db.pool.query<TeamRow>(
      `INSERT INTO teams (name, cohort, fair_share_weight, within_team, reclaim_within_cohort, updated_at)
       VALUES ($1, $2, $3, $4::within_team_policy, $5::reclaim_policy, now())
       ON CONFLICT (name) DO UPDATE SET cohort = EXCLUDED.cohort, fair_share_weight = EXCLUDED.fair_share_weight,
         within_team = EXCLUDED.within_team, reclaim_within_cohort = EXCLUDED.reclaim_within_cohort, updated_at = now()
       RETURNING ${COLUMNS}, (xmax = 0) AS created`,
      [name, t.cohort, t.fairShareWeight, t.withinTeam, t.reclaimWithinCohort],
    );
    const row = rows[0]!;
    return { record: toRecord(row), created: row.created === true };
  }

  async list(names?: readonly string[]): Promise<TeamRecord[]> {
    const { rows } = names
      ? await this.db.pool.query<TeamRow>(`SELECT ${COLUMNS} FROM teams WHERE name = ANY($1::text[]) ORDER BY name`, [names])
      : await this.db.pool.query<TeamRow>(`SELECT ${COLUMNS} FROM teams ORDER BY name`);
    return rows.map(toRecord);
  }

  async get(name: string): Promise<TeamRecord | null> {
    const { rows } = await this.db.pool.query<TeamRow>(`SELECT ${COLUMNS} FROM teams WHERE name = $1`, [name]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Names among `names` that are not teams. */
  async missing(names: readonly string[]): Promise<string[]> {
    const { rows } = await this.db.pool.query<{ name: string }>(
      'SELECT n AS name FROM unnest($1::text[]) AS n WHERE NOT EXISTS (SELECT 1 FROM teams t WHERE t.name = n)',
      [names],
    );
    return rows.map((r) => r.name);
  }

  async quotasOf(teams: readonly string[]): Promise<QuotaRecord[]> {
    const { rows } = await this.db.pool.query<QuotaRow>(
      'SELECT team, flavor, nominal, borrowing_limit, lending_limit FROM quotas WHERE team = ANY($1::text[]) ORDER BY team, flavor',
      [teams],
    );
    return rows.map(toQuotaRecord);
  }
}
