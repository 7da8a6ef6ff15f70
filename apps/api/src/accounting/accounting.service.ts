import { Inject, Injectable } from '@nestjs/common';
import { forbidden, notFound } from '#common';
import { BudgetRepository, FlavorRepository, periodOf, TeamRepository, UsageLedgerRepository, type BudgetStatus, type QuotaRecord, type UsageDimension, type UsageRow } from '#db';
import { canActForTeam, type Principal } from '../auth/principal.js';
import type { UsageQuery } from './accounting.dto.js';
import type { PriceView } from './accounting.view.js';
import { parseUsageWindow } from './usage-window.js';

/** One line of GET /v1/usage (and the `total`). Hours are derived from the exact seconds. */
export interface UsageItem {
  team?: string;
  /** Who submitted the jobs (groupBy user), and through which API token. */
  user?: string;
  userToken?: string | null;
  flavor?: string;
  /** `2026-11-30` (groupBy day) or `2026-11` (groupBy month), UTC. */
  period?: string;
  periodStart?: string;
  acceleratorHours: number;
  wastedAcceleratorHours: number;
  acceleratorSeconds: number;
  wastedAcceleratorSeconds: number;
  cost: number;
  jobsCompleted: number;
  /** acceleratorHours ÷ (nominal quota now × hours of the period in the window); null without nominal quota. */
  nominalShare: number | null;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageDimension[];
  /** The teams the figures cover: the caller's for a member, every team with use for an admin (null = all). */
  teams: string[] | null;
  items: UsageItem[];
  total: UsageItem;
}

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

@Injectable()
export class AccountingService {
  constructor(
    @Inject(UsageLedgerRepository) private readonly ledger: UsageLedgerRepository,
    @Inject(BudgetRepository) private readonly budgets: BudgetRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
  ) {}

  /** The flavor's price history, oldest first; kept after the flavor is deleted (404 when it never had one). */
  async prices(flavor: string): Promise<PriceView[]> {
    const prices = await this.ledger.prices(flavor);
    if (prices.length === 0 && (await this.flavors.get(flavor)) === null) throw notFound(`flavor ${flavor}`);
    return prices.map((p) => ({ costPerHour: p.costPerHour, effectiveFrom: p.effectiveFrom.toISOString() }));
  }

  /** Members see their teams only (403 for another); admins every team. */
  private scope(caller: Principal, team: string | undefined): string[] | undefined {
    if (team !== undefined) {
      if (!canActForTeam(caller, team)) throw forbidden(`${caller.subject} may not read the usage of team ${team}`);
      return [team];
    }
    return caller.role === 'admin' ? undefined : [...caller.teams];
  }

  async usage(q: UsageQuery, caller: Principal, now: Date): Promise<UsageReport> {
    const w = parseUsageWindow(q, now);
    const teams = this.scope(caller, q.team);
    const time = w.groupBy.includes('day') ? 'day' : w.groupBy.includes('month') ? 'month' : null;
    const [rows, totalRows, quotas] = await Promise.all([
      this.ledger.usage({ from: w.from, to: w.to, now, groupBy: w.groupBy, teams }),
      this.ledger.usage({ from: w.from, to: w.to, now, groupBy: [], teams }),
      this.quotas(teams),
    ]);
    const end = new Date(Math.min(w.to.getTime(), now.getTime()));
    const hoursOf = (r: UsageRow): number => {
      const start = r.periodStart === undefined ? w.from : new Date(Math.max(r.periodStart.getTime(), w.from.getTime()));
      const stop = r.periodStart === undefined || time === null ? end : new Date(Math.min(periodOf(time, r.periodStart).end.getTime(), end.getTime()));
      return Math.max(0, stop.getTime() - start.getTime()) / 3_600_000;
    };
    const nominalOf = (r: UsageRow): number =>
      quotas.filter((x) => (r.team === undefined || x.team === r.team) && (r.flavor === undefined || x.flavor === r.flavor)).reduce((s, x) => s + x.nominal, 0);
    const item = (r: UsageRow): UsageItem => {
      const out: UsageItem = {
        acceleratorHours: round(r.acceleratorSeconds / 3600, 6),
        wastedAcceleratorHours: round(r.wastedAcceleratorSeconds / 3600, 6),
        acceleratorSeconds: round(r.acceleratorSeconds, 3),
        wastedAcceleratorSeconds: round(r.wastedAcceleratorSeconds, 3),
        cost: round(r.cost, 6),
        jobsCompleted: r.jobsCompleted,
        nominalShare: null,
      };
      if (r.team !== undefined) out.team = r.team;
      if (r.user !== undefined) {
        out.user = r.user;
        out.userToken = r.userToken ?? null;
      }
      if (r.flavor !== undefined) out.flavor = r.flavor;
      if (r.periodStart !== undefined && time !== null) {
        out.period = time === 'day' ? r.periodStart.toISOString().slice(0, 10) : r.periodStart.toISOString().slice(0, 7);
        out.periodStart = r.periodStart.toISOString();
      }
      const capacity = nominalOf(r) * hoursOf(r);
      out.nominalShare = capacity > 0 ? Number((r.acceleratorSeconds / 3600 / capacity).toPrecision(6)) : null;
      return out;
    };
    const zero: UsageRow = { acceleratorSeconds: 0, wastedAcceleratorSeconds: 0, cost: 0, jobsCompleted: 0 };
    return {
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      groupBy: w.groupBy,
      teams: teams ?? null,
      items: rows.map(item),
      total: item(totalRows[0] ?? zero),
    };
  }

  private async quotas(teams: string[] | undefined): Promise<QuotaRecord[]> {
    const names = teams ?? (await this.teams.list()).map((t) => t.name);
    return this.teams.quotasOf(names);
  }

  /** Budgets with their current period's use; members see their teams' only. */
  async budgetStatuses(caller: Principal, now: Date, team?: string): Promise<BudgetStatus[]> {
    return this.budgets.statuses(now, this.scope(caller, team));
  }
}

/** GET /v1/usage as CSV (RFC 4180): the grouping columns, then the figures. */
export function usageCsv(r: UsageReport): string {
  const dims = [...(r.groupBy.includes('team') ? ['team'] : []), ...(r.groupBy.includes('user') ? ['user', 'userToken'] : []), ...(r.groupBy.includes('flavor') ? ['flavor'] : []), ...(r.groupBy.some((g) => g === 'day' || g === 'month') ? ['period'] : [])];
  const head = [...dims.map((d) => (d === 'userToken' ? 'user_token' : d)), 'accelerator_hours', 'wasted_accelerator_hours', 'cost', 'jobs_completed', 'nominal_share'];
  const cell = (v: string | number | null | undefined): string => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const line = (i: UsageItem): string =>
    [...dims.map((d) => cell(i[d as 'team' | 'user' | 'userToken' | 'flavor' | 'period'])), i.acceleratorHours, i.wastedAcceleratorHours, i.cost, i.jobsCompleted, cell(i.nominalShare)].join(',');
  return [head.join(','), ...r.items.map(line)].join('\r\n') + '\r\n';
}
