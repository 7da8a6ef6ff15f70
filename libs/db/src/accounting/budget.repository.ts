import type { DbHandle } from '../repositories/db-handle.js';
import { isForeignKeyViolation, TX_OPTIONS, writeTenancyEvent, type Tx } from '../repositories/prisma-helpers.js';
import { MissingReferenceError } from '../repositories/tenancy.records.js';
import { BUDGET_SELECT, budgetFigures, budgetUnitToDb, readBudgetStatuses, toBudgetRecord, type BudgetActionName, type BudgetRecord, type BudgetStatus, type BudgetUnitName } from './budgets.js';
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

/** What the budget.exhausted event says the budget does now, by onExhausted. */
const EXHAUSTED: Record<BudgetActionName, string> = {
  warn: 'exhausted (warn only)',
  block: 'exhausted: new jobs wait for the next period, running jobs go on',
  stop: 'exhausted: new jobs wait for the next period, running jobs are stopped',
};

const describe = (b: BudgetRecord | null): string =>
  b === null ? 'none' : `${b.limit} ${b.unit === 'currency' ? '(cost)' : 'accelerator-hours'} per ${b.period}, ${b.onExhausted} when exhausted`;

/** The budget locked (FOR UPDATE: Prisma's query API has no row lock) and read, or null when there is none. */
async function lockedBudget(tx: Tx, team: string, period: PeriodKind): Promise<BudgetRecord | null> {
  const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM budgets WHERE team = ${team} AND period = ${period}::budget_period FOR UPDATE`;
  if (locked.length === 0) return null;
  const row = await tx.budget.findUnique({ where: { team_period: { team, period } }, select: BUDGET_SELECT });
  return row === null ? null : toBudgetRecord(row);
}

/**
 * Team budgets (Prisma client), audited like quotas: every change writes an event (budget.created /
 * budget.updated / budget.deleted) with who, before and after, in the transaction of the change.
 * Threshold crossings are recorded once per budget and period (budget_alerts) with a budget.warning /
 * budget.exhausted event. Their use (statuses) is an aggregation over the usage ledger in raw SQL, shared
 * with the scheduler's snapshot (readBudgetStatuses).
 */
export class BudgetRepository {
  constructor(private readonly db: DbHandle) {}

  /** Throws MissingReferenceError (field `team`) when the team does not exist. */
  async put(b: BudgetInput, actor: string): Promise<BudgetChange> {
    const data = { team: b.team, period: b.period, limit: b.limit, unit: budgetUnitToDb(b.unit), onExhausted: b.onExhausted };
    try {
      return await this.db.prisma.$transaction(async (tx) => {
        // Insert first, as for quotas: a lock taken while the row does not exist locks nothing, so concurrent
        // creations each saw "none", each answered 201 and wrote budget.created with before null. A
        // concurrent INSERT waits for the first to commit, then finds the row, locks it and reads its true `before`.
        let before: BudgetRecord | null = null;
        let after: BudgetRecord | undefined;
        // Loops only when the row is deleted between the two statements.
        while (after === undefined) {
          const [created] = await tx.budget.createManyAndReturn({ data: [data], skipDuplicates: true, select: BUDGET_SELECT });
          if (created !== undefined) {
            after = toBudgetRecord(created);
            break;
          }
          before = await lockedBudget(tx, b.team, b.period);
          if (before === null) continue;
          after = toBudgetRecord(
            await tx.budget.update({ where: { team_period: { team: b.team, period: b.period } }, data: { limit: data.limit, unit: data.unit, onExhausted: data.onExhausted }, select: BUDGET_SELECT }),
          );
        }
        const kind = before === null ? 'budget.created' : 'budget.updated';
        const message = `${b.period} budget of team ${b.team} set by ${actor}: ${describe(before)} → ${describe(after)}`;
        const eventId = await writeTenancyEvent(tx, kind, b.team, actor, message, { period: b.period, before: json(before), after: json(after) });
        return { before, after, eventId };
      }, TX_OPTIONS);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new MissingReferenceError('team', b.team);
      throw error;
    }
  }

  /** Null when there was no such budget (nothing written). */
  async delete(team: string, period: PeriodKind, actor: string): Promise<BudgetChange | null> {
    return this.db.prisma.$transaction(async (tx) => {
      const before = await lockedBudget(tx, team, period);
      if (before === null) return null;
      await tx.budget.delete({ where: { team_period: { team, period } } });
      const message = `${period} budget of team ${team} deleted by ${actor}: ${describe(before)} → none`;
      const eventId = await writeTenancyEvent(tx, 'budget.deleted', team, actor, message, { period, before: json(before), after: null });
      return { before, after: null, eventId };
    }, TX_OPTIONS);
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
    return this.db.prisma.$transaction(async (tx) => {
      const claimed = await tx.budgetAlert.createMany({ data: [{ team: b.team, period: b.period, periodStart: b.periodStart, threshold }], skipDuplicates: true });
      if (claimed.count === 0) return null;
      const kind = threshold === 100 ? 'budget.exhausted' : 'budget.warning';
      const what = threshold === 100 ? EXHAUSTED[b.onExhausted] : `at ${threshold}%`;
      const message = `${b.period} budget of team ${b.team} ${what}: ${budgetFigures(b)} in ${b.periodLabel}`;
      const eventId = await writeTenancyEvent(tx, kind, b.team, 'quartermaster', message, {
        period: b.period,
        periodStart: b.periodStart.toISOString(),
        threshold,
        used: b.used,
        limit: b.limit,
        unit: b.unit,
        onExhausted: b.onExhausted,
      });
      await tx.budgetAlert.update({
        where: { team_period_periodStart_threshold: { team: b.team, period: b.period, periodStart: b.periodStart, threshold } },
        data: { eventId: BigInt(eventId) },
      });
      return eventId;
    }, TX_OPTIONS);
  }

  /** Thresholds already recorded for the current periods (team → period → thresholds). */
  async alerts(team: string): Promise<{ period: PeriodKind; periodStart: Date; threshold: number; at: Date; eventId: string | null }[]> {
    const rows = await this.db.prisma.budgetAlert.findMany({
      where: { team },
      select: { period: true, periodStart: true, threshold: true, at: true, eventId: true },
      orderBy: [{ periodStart: 'asc' }, { period: 'asc' }, { threshold: 'asc' }],
    });
    return rows.map((r) => ({ ...r, eventId: r.eventId === null ? null : r.eventId.toString() }));
  }
}

/** A budget as event data (JSON: its times as ISO strings, as the pg driver wrote them before). */
const json = (b: BudgetRecord | null): Record<string, string | number> | null =>
  b === null ? null : { ...b, createdAt: b.createdAt.toISOString(), updatedAt: b.updatedAt.toISOString() };
