import type { DbHandle } from '../repositories/db-handle.js';
import { inTransaction } from '../repositories/db-handle.js';
import { BUDGET_COLUMNS, budgetFigures, readBudgetStatuses, toBudgetRecord, type BudgetActionName, type BudgetRecord, type BudgetRow, type BudgetStatus, type BudgetUnitName } from './budgets.js';
import type { PeriodKind } from './periods.js';

export interface BudgetInput {
  team: string;
  period: PeriodKind;
  limit: number;
  unit: BudgetUnitName;
  onExhausted: BudgetActionName;
}

export interface BudgetChange {
  before: BudgetRecord | null;
  after: BudgetRecord | null;
  /** The audit event written in the same transaction. */
  eventId: string;
}

const describe = (b: BudgetRecord | null): string =>
  b === null ? 'none' : `${b.limit} ${b.unit === 'currency' ? '(cost)' : 'accelerator-hours'} per ${b.period}, ${b.onExhausted} when exhausted`;

/**
 * Team budgets, audited like quotas: every change writes an event (budget.created / budget.updated /
 * budget.deleted) with who, before and after, in the transaction of the change. Threshold crossings are
 * recorded once per budget and period (budget_alerts) with a budget.warning / budget.exhausted event.
 */
export class BudgetRepository {
  constructor(private readonly db: DbHandle) {}

  /** Throws the pg foreign-key error (23503) when the team does not exist. */
  async put(b: BudgetInput, actor: string): Promise<BudgetChange> {
    return inTransaction(this.db.pool, async (client) => {
      // Insert first, as for quotas: a SELECT … FOR UPDATE locks nothing while the row does not exist, so
      // concurrent creations each saw "none", each answered 201 and wrote budget.created with before null.
      // A concurrent INSERT waits for the first to commit, then finds the row, locks it and reads its true `before`.
      const values = [b.team, b.period, b.limit, b.unit, b.onExhausted];
      let before: BudgetRecord | null = null;
      let rows: BudgetRow[] = [];
      // Loops only when the row is deleted between the two statements.
      while (rows.length === 0) {
        ({ rows } = await client.query<BudgetRow>(
          `INSERT INTO budgets (team, period, limit_amount, unit, on_exhausted, updated_at)
           VALUES ($1, $2::budget_period, $3, $4::budget_unit, $5::budget_action, now())
           ON CONFLICT (team, period) DO NOTHING
           RETURNING ${BUDGET_COLUMNS}`,
          values,
        ));
        if (rows.length > 0) break;
        const prior = await client.query<BudgetRow>(`SELECT ${BUDGET_COLUMNS} FROM budgets WHERE team = $1 AND period = $2::budget_period FOR UPDATE`, [b.team, b.period]);
        if (!prior.rows[0]) continue;
        before = toBudgetRecord(prior.rows[0]);
        ({ rows } = await client.query<BudgetRow>(
          `UPDATE budgets SET limit_amount = $3, unit = $4::budget_unit, on_exhausted = $5::budget_action, updated_at = now()
           WHERE team = $1 AND period = $2::budget_period
           RETURNING ${BUDGET_COLUMNS}`,
          values,
        ));
      }
      const after = toBudgetRecord(rows[0]!);
      const kind = before === null ? 'budget.created' : 'budget.updated';
      const message = `${b.period} budget of team ${b.team} set by ${actor}: ${describe(before)} → ${describe(after)}`;
      const eventId = await event(client, kind, b.team, actor, message, { period: b.period, before, after });
      return { before, after, eventId };
    });
  }

  /** Null when there was no such budget (nothing written). */
  async delete(team: string, period: PeriodKind, actor: string): Promise<BudgetChange | null> {
    return inTransaction(this.db.pool, async (client) => {
      const prior = await client.query<BudgetRow>(`SELECT ${BUDGET_COLUMNS} FROM budgets WHERE team = $1 AND period = $2::budget_period FOR UPDATE`, [team, period]);
      if (!prior.rows[0]) return null;
      const before = toBudgetRecord(prior.rows[0]);
      await client.query('DELETE FROM budgets WHERE team = $1 AND period = $2::budget_period', [team, period]);
      const message = `${period} budget of team ${team} deleted by ${actor}: ${describe(before)} → none`;
      const eventId = await event(client, 'budget.deleted', team, actor, message, { period, before, after: null });
      return { before, after: null, eventId };
    });
  }

  /** Budgets with their use in the current period (of `teams`, or all). */
  statuses(now: Date, teams?: readonly string[]): Promise<BudgetStatus[]> {
    return readBudgetStatuses(this.db.pool, now, teams === undefined ? {} : { teams });
  }

  /**
   * Records that `b` reached `threshold` percent (80 or 100) in its current period, with its event — once:
   * a second call for the same budget, period and threshold (another replica, the next check) writes
   * nothing and returns null.
   */
  async recordAlert(b: BudgetStatus, threshold: 80 | 100): Promise<string | null> {
    return inTransaction(this.db.pool, async (client) => {
      const claimed = await client.query(
        `INSERT INTO budget_alerts (team, period, period_start, threshold) VALUES ($1, $2::budget_period, $3, $4)
         ON CONFLICT DO NOTHING RETURNING team`,
        [b.team, b.period, b.periodStart, threshold],
      );
      if (claimed.rows.length === 0) return null;
      const kind = threshold === 100 ? 'budget.exhausted' : 'budget.warning';
      const what = threshold === 100 ? (b.onExhausted === 'block' ? 'exhausted: new jobs wait for the next period' : 'exhausted (warn only)') : `at ${threshold}%`;
      const message = `${b.period} budget of team ${b.team} ${what}: ${budgetFigures(b)} in ${b.periodLabel}`;
      const eventId = await event(client, kind, b.team, 'quartermaster', message, {
        period: b.period,
        periodStart: b.periodStart.toISOString(),
        threshold,
        used: b.used,
        limit: b.limit,
        unit: b.unit,
        onExhausted: b.onExhausted,
      });
      await client.query('UPDATE budget_alerts SET event_id = $5 WHERE team = $1 AND period = $2::budget_period AND period_start = $3 AND threshold = $4', [
        b.team,
        b.period,
        b.periodStart,
        threshold,
        eventId,
      ]);
      return eventId;
    });
  }

  /** Thresholds already recorded for the current periods (team → period → thresholds). */
  async alerts(team: string): Promise<{ period: PeriodKind; periodStart: Date; threshold: number; at: Date; eventId: string | null }[]> {
    const { rows } = await this.db.pool.query<{ period: PeriodKind; period_start: Date; threshold: number; at: Date; event_id: string | null }>(
      `SELECT period::text AS period, period_start, threshold, at, event_id::text AS event_id FROM budget_alerts WHERE team = $1 ORDER BY period_start, period, threshold`,
      [team],
    );
    return rows.map((r) => ({ period: r.period, periodStart: r.period_start, threshold: r.threshold, at: r.at, eventId: r.event_id }));
  }
}

async function event(
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
