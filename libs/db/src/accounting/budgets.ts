import type { BudgetBlock, BudgetStopRule } from '#core';
import type { Prisma } from '../generated/prisma/client.js';
import { periodOf } from './periods.js';
import { readUsage, type Queryable } from './usage-ledger.js';

export type BudgetUnitName = 'accelerator-hours' | 'currency';
/**
 * What a used-up budget does (docs/adr/0023-budget-stop.md): `warn` — events and metrics only; `block` — also
 * keeps the team's new jobs pending until the next period, its running jobs go on; `stop` — as block, and
 * its running jobs that count against the budget are stopped (requeued with their grace period) until then.
 */
export type BudgetActionName = 'warn' | 'block' | 'stop';
/** The actions that keep a team's new jobs pending while the budget is used up. */
export const BLOCKING_ACTIONS: readonly BudgetActionName[] = ['block', 'stop'];

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
export async function readBudgetStatuses(
  sql: Queryable,
  now: Date,
  filter: { teams?: readonly string[]; actions?: readonly BudgetActionName[] } = {},
): Promise<BudgetStatus[]> {
  const { rows: budgets } = await sql.query<BudgetRecord>(
    `SELECT ${BUDGET_COLUMNS} FROM budgets
     WHERE ($1::text[] IS NULL OR team = ANY($1::text[])) AND ($2::budget_action[] IS NULL OR on_exhausted = ANY($2::budget_action[]))
     ORDER BY team, period`,
    [filter.teams === undefined ? null : [...filter.teams], filter.actions === undefined ? null : [...filter.actions]],
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

/** `team vision used 2.5 of 0.5 accelerator-hours of its day budget (2026-12-07)`. */
const usedOfBudget = (b: BudgetStatus): string => `team ${b.team} used ${budgetFigures(b)} of its ${b.period} budget (${b.periodLabel})`;

/**
 * What used-up budgets do to the scheduling core's snapshot, now: `blocks` — the teams a `block` or `stop`
 * budget keeps from starting new jobs (Snapshot.budgetBlocks), until the end of the latest used-up period of
 * the team; `stops` — every used-up `stop` budget (BudgetedSnapshot.budgetStops), whose team's running jobs
 * the core stops. One ledger read per period kind in use by such budgets; none without them.
 */
export async function readBudgetLimits(sql: Queryable, now: Date): Promise<{ blocks: BudgetBlock[]; stops: BudgetStopRule[] }> {
  const exhausted = (await readBudgetStatuses(sql, now, { actions: BLOCKING_ACTIONS })).filter((b) => b.state === 'exhausted');
  const byTeam = new Map<string, BudgetStatus>();
  for (const b of exhausted) {
    const prior = byTeam.get(b.team);
    if (prior === undefined || b.periodEnd > prior.periodEnd) byTeam.set(b.team, b);
  }
  const blocks = [...byTeam.values()].map((b) => ({
    team: b.team,
    until: b.periodEnd.getTime(),
    message: `${usedOfBudget(b)}; ${b.onExhausted === 'stop' ? 'new and stopped jobs wait' : 'new jobs wait'} for the next period, from ${b.periodEnd.toISOString()}`,
  }));
  const stops = exhausted
    .filter((b) => b.onExhausted === 'stop')
    .map((b) => ({ team: b.team, period: b.period, unit: b.unit, until: b.periodEnd.getTime(), message: usedOfBudget(b) }));
  return { blocks, stops };
}
