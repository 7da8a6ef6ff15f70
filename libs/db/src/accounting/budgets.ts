import type { Prisma } from '../generated/prisma/client.js';
import { periodOf } from './periods.js';
import { readUsage, type Queryable } from './usage-ledger.js';

export type BudgetUnitName = 'accelerator-hours' | 'currency';
export type BudgetActionName = 'warn' | 'block';

export const BUDGET_SELECT = { team: true, period: true, limit: true, unit: true, onExhausted: true, createdAt: true, updatedAt: true } as const satisfies Prisma.BudgetSelect;
type BudgetPayload = Prisma.BudgetGetPayload<{ select: typeof BUDGET_SELECT }>;

/** A team's budget for one period kind: Prisma's row, the unit in the API's spelling. `limit`: accelerator-hours, or the currency of the flavors' costPerHour. */
export type BudgetRecord = Omit<BudgetPayload, 'unit'> & { unit: BudgetUnitName };

export const toBudgetRecord = (r: BudgetPayload): BudgetRecord => ({ ...r, unit: r.unit === 'accelerator_hours' ? 'accelerator-hours' : 'currency' });
export const budgetUnitToDb = (unit: BudgetUnitName): BudgetPayload['unit'] => (unit === 'accelerator-hours' ? 'accelerator_hours' : 'currency');

/** Share of the limit at which a warning is recorded, and at which the budget is exhausted. */
export const WARN_AT = 0.8;

export type BudgetStatus = BudgetRecord & {
  periodStart: Date;
  periodEnd: Date;
  /** `2026-11`, `2026-W48`, `2026-11-30`. */
  periodLabel: string;
  acceleratorHours: number;
  cost: number;
  /** `acceleratorHours` or `cost`, as the unit says. */
  used: number;
  /** used / limit (Infinity for a zero limit with any use, 0 without). */
  ratio: number;
  state: 'ok' | 'warning' | 'exhausted';
};

/** The columns of a BudgetRecord, as the raw read of the snapshot's budget check names them. */
const BUDGET_COLUMNS = `team, period::text AS period, limit_amount AS "limit", unit::text AS unit, on_exhausted::text AS "onExhausted",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const figure = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

/** `1,002.5 of 1,000 accelerator-hours`, `950 of 1,000 (currency)`. */
export function budgetFigures(b: Pick<BudgetStatus, 'used' | 'limit' | 'unit'>): string {
  return b.unit === 'currency' ? `${figure(b.used)} of ${figure(b.limit)} (cost)` : `${figure(b.used)} of ${figure(b.limit)} accelerator-hours`;
}

/**
 * Budgets with their use in the current period (from the usage ledger, up to `now`). One ledger read per
 * period kind in use, for all the teams that have one.
 */
export async function readBudgetStatuses(sql: Queryable, now: Date, filter: { teams?: readonly string[]; action?: BudgetActionName } = {}): Promise<BudgetStatus[]> {
  const { rows: budgets } = await sql.query<BudgetRecord>(
    `SELECT ${BUDGET_COLUMNS} FROM budgets
     WHERE ($1::text[] IS NULL OR team = ANY($1::text[])) AND ($2::text IS NULL OR on_exhausted = $2::budget_action)
     ORDER BY team, period`,
    [filter.teams === undefined ? null : [...filter.teams], filter.action ?? null],
  );
  const out: BudgetStatus[] = [];
  for (const kind of [...new Set(budgets.map((b) => b.period))]) {
    const bounds = periodOf(kind, now);
    const ofKind = budgets.filter((b) => b.period === kind);
    const usage = await readUsage(sql, { from: bounds.start, to: bounds.end, now, groupBy: ['team'], teams: ofKind.map((b) => b.team) });
    const byTeam = new Map(usage.map((u) => [u.team!, u]));
    for (const b of ofKind) {
      const u = byTeam.get(b.team);
      const acceleratorHours = (u?.acceleratorSeconds ?? 0) / 3600;
      const cost = u?.cost ?? 0;
      const used = b.unit === 'currency' ? cost : acceleratorHours;
      const ratio = b.limit > 0 ? used / b.limit : used > 0 ? Infinity : 0;
      const state = used >= b.limit ? 'exhausted' : ratio >= WARN_AT ? 'warning' : 'ok';
      out.push({ ...b, periodStart: bounds.start, periodEnd: bounds.end, periodLabel: bounds.label, acceleratorHours, cost, used, ratio, state });
    }
  }
  return out.sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
}

/**
 * The teams a `block` budget stops now, for the scheduling core (Snapshot.budgetBlocks): until the end of
 * the latest exhausted period of the team.
 */
export async function readBudgetBlocks(sql: Queryable, now: Date): Promise<{ team: string; until: number; message: string }[]> {
  const exhausted = (await readBudgetStatuses(sql, now, { action: 'block' })).filter((b) => b.state === 'exhausted');
  const byTeam = new Map<string, BudgetStatus>();
  for (const b of exhausted) {
    const prior = byTeam.get(b.team);
    if (prior === undefined || b.periodEnd > prior.periodEnd) byTeam.set(b.team, b);
  }
  return [...byTeam.values()].map((b) => ({
    team: b.team,
    until: b.periodEnd.getTime(),
    message: `team ${b.team} used ${budgetFigures(b)} of its ${b.period} budget (${b.periodLabel}); new jobs wait for the next period, from ${b.periodEnd.toISOString()}`,
  }));
}
