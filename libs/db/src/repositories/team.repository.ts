import { inTransaction, pgCode, PG_FOREIGN_KEY_VIOLATION, type DbHandle } from './db-handle.js';
import { writeTenancyEvent, type Deletion, type QuotaRecord, type TeamRecord, type Upserted } from './tenancy.records.js';

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

/** What keeps a team from being deleted. */
export interface TeamUse {
  /** Jobs not yet SUCCEEDED, FAILED or CANCELLED. */
  unfinishedJobs: number;
  /** Flavors it has a quota for. */
  quotas: string[];
  /** Periods it has a budget for. */
  budgets: string[];
  /** Side effects (pod deletion…) of its jobs not yet carried out. */
  pendingSideEffects: number;
}

export const teamInUse = (u: TeamUse): boolean => u.unfinishedJobs > 0 || u.quotas.length > 0 || u.budgets.length > 0 || u.pendingSideEffects > 0;

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

  /**
   * Changes only the fields given (merge), in one statement, so concurrent patches of different fields both
   * stay. Null when there is no such team. Throws the pg foreign-key error (23503) when the cohort does not exist.
   */
  async patch(name: string, t: Partial<TeamInput>): Promise<TeamRecord | null> {
    const { rows } = await this.db.pool.query<TeamRow>(
      `UPDATE teams SET
         cohort = CASE WHEN $2 THEN $3 ELSE cohort END,
         fair_share_weight = COALESCE($4, fair_share_weight),
         within_team = COALESCE($5::within_team_policy, within_team),
         reclaim_within_cohort = COALESCE($6::reclaim_policy, reclaim_within_cohort),
         updated_at = now()
       WHERE name = $1
       RETURNING ${COLUMNS}`,
      [name, t.cohort !== undefined, t.cohort ?? null, t.fairShareWeight ?? null, t.withinTeam ?? null, t.reclaimWithinCohort ?? null],
    );
    return rows[0] ? toRecord(rows[0]) : null;
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

  /**
   * Deletes a team that nothing uses any more (no unfinished job, quota, budget or pending side effect of its
   * jobs), with its finished jobs (their events stay, and the usage ledger keeps its accelerator-hours and
   * cost), takes it off every token (revoking member/executor tokens left without a team), and writes a
   * team.deleted event — in one transaction. The team row is locked
   * first, so a job, quota or budget written for it meanwhile either commits before the check (and is seen)
   * or fails on the foreign key after the delete.
   */
  async delete(name: string, actor: string): Promise<Deletion<TeamUse>> {
    try {
      return await this.deleteOnce(name, actor);
    } catch (error) {
      // Defence in depth: a job the lock did not hold back makes the team row undeletable (foreign key);
      // the second pass sees it and answers in-use instead of failing.
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) return this.deleteOnce(name, actor);
      throw error;
    }
  }

  private async deleteOnce(name: string, actor: string): Promise<Deletion<TeamUse>> {
    return inTransaction(this.db.pool, async (client) => {
      const team = await client.query('SELECT 1 FROM teams WHERE name = $1 FOR UPDATE', [name]);
      if (team.rowCount !== 1) return { outcome: 'missing' };
      const { rows } = await client.query<TeamUse>(
        `SELECT (SELECT count(*)::int FROM jobs WHERE team = $1 AND state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')) AS "unfinishedJobs",
                ARRAY(SELECT flavor FROM quotas WHERE team = $1 ORDER BY flavor) AS quotas,
                ARRAY(SELECT period::text FROM budgets WHERE team = $1 ORDER BY period) AS budgets,
                (SELECT count(*)::int FROM outbox o WHERE o.status <> 'done'
                   AND (o.payload->>'jobId') IN (SELECT id::text FROM jobs WHERE team = $1)) AS "pendingSideEffects"`,
        [name],
      );
      const use = rows[0]!;
      if (teamInUse(use)) return { outcome: 'in-use', use };
      const jobs = await client.query(`DELETE FROM jobs WHERE team = $1 AND state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')`, [name]);
      await client.query('DELETE FROM teams WHERE name = $1', [name]);
      // Tokens lose the team (a team of that name made later is someone else's); a member or executor
      // token left without any team is revoked.
      const tokens = await client.query<{ id: string; revoked: boolean }>(
        `UPDATE api_tokens SET teams = array_remove(teams, $1),
           revoked_at = CASE WHEN role <> 'admin' AND teams = ARRAY[$1]::text[] THEN COALESCE(revoked_at, now()) ELSE revoked_at END
         WHERE $1 = ANY(teams)
         RETURNING id::text AS id, (revoked_at IS NOT NULL AND teams = '{}') AS revoked`,
        [name],
      );
      const revokedTokens = tokens.rows.filter((t) => t.revoked).map((t) => t.id);
      const finished = jobs.rowCount ?? 0;
      const eventId = await writeTenancyEvent(
        client,
        'team.deleted',
        name,
        actor,
        `team ${name} deleted by ${actor} (with ${finished} finished job(s); removed from ${tokens.rows.length} token(s), ${revokedTokens.length} of them revoked)`,
        { finishedJobsDeleted: finished, tokensChanged: tokens.rows.map((t) => t.id), tokensRevoked: revokedTokens },
      );
      return { outcome: 'deleted', eventId };
    });
  }
}
