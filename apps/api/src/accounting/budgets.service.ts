import { Inject, Injectable } from '@nestjs/common';
import { notFound, unknownReference } from '#common';
import { BudgetRepository, MissingReferenceError, TeamRepository, type PeriodKind } from '#db';
import type { Principal } from '../auth/principal.js';
import type { PutBudgetDto } from './accounting.dto.js';
import { AccountingService } from './accounting.service.js';
import { budgetRecordView, budgetView, type BudgetDeletedView, type BudgetSetView, type BudgetView } from './accounting.view.js';
import { BudgetWatcher } from './budget-watcher.js';

/** Budgets with their current period's use; every change audited, and checked at once by the watcher. */
@Injectable()
export class BudgetsService {
  constructor(
    @Inject(AccountingService) private readonly accounting: AccountingService,
    @Inject(BudgetRepository) private readonly budgets: BudgetRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(BudgetWatcher) private readonly watcher: BudgetWatcher,
  ) {}

  /** Every budget with its use in the current period (members: their teams'). */
  async list(caller: Principal): Promise<BudgetView[]> {
    return (await this.accounting.budgetStatuses(caller, new Date())).map(budgetView);
  }

  async ofTeam(team: string, caller: Principal): Promise<BudgetView[]> {
    const items = await this.accounting.budgetStatuses(caller, new Date(), team);
    if (items.length === 0 && (await this.teams.missing([team])).length > 0) throw notFound(`team ${team}`);
    return items.map(budgetView);
  }

  async get(team: string, period: PeriodKind, caller: Principal): Promise<BudgetView> {
    const b = (await this.accounting.budgetStatuses(caller, new Date(), team)).find((x) => x.period === period);
    if (b === undefined) throw notFound(`${period} budget of team ${team}`);
    return budgetView(b);
  }

  /** Sets a team's budget for a period kind (admin); the change is an audited event, like a quota's. */
  async put(team: string, period: PeriodKind, dto: PutBudgetDto, caller: Principal): Promise<{ created: boolean; budget: BudgetSetView }> {
    if ((await this.teams.missing([team])).length > 0) throw unknownReference('team', `unknown team: ${team}`);
    const change = await this.budgets.put({ team, period, limit: dto.limit, unit: dto.unit, onExhausted: dto.onExhausted }, caller.subject).catch((error: unknown) => {
      if (error instanceof MissingReferenceError) throw unknownReference('team', `unknown team: ${team}`);
      throw error;
    });
    // A budget set below what the team already used warns (and blocks) at once, not at the next check.
    await this.watcher.check([team]);
    const status = (await this.budgets.statuses(new Date(), [team])).find((b) => b.period === period);
    if (status === undefined) throw notFound(`${period} budget of team ${team}`); // deleted meanwhile
    const before = change.before && budgetRecordView(change.before);
    return { created: change.before === null, budget: { ...budgetView(status), before, eventId: change.eventId } };
  }

  async delete(team: string, period: PeriodKind, caller: Principal): Promise<BudgetDeletedView> {
    const change = await this.budgets.delete(team, period, caller.subject);
    if (!change) throw notFound(`${period} budget of team ${team}`);
    return { team, period, before: budgetRecordView(change.before!), after: null, eventId: change.eventId };
  }
}
