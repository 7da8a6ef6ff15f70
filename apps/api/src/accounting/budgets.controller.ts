import { Body, Controller, Delete, Get, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound, unknownReference } from '#common';
import { BudgetRepository, pgCode, PG_FOREIGN_KEY_VIOLATION, TeamRepository, type BudgetRecord, type PeriodKind } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutBudgetDto } from './accounting.dto.js';
import { AccountingService, budgetView } from './accounting.service.js';
import { BudgetWatcher } from './budget-watcher.js';
import { PeriodPipe } from './period.pipe.js';

const recordView = (b: BudgetRecord | null): Record<string, unknown> | null => (b === null ? null : { team: b.team, period: b.period, limit: b.limit, unit: b.unit, onExhausted: b.onExhausted });

@ApiTags('accounting')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class BudgetsController {
  constructor(
    @Inject(AccountingService) private readonly accounting: AccountingService,
    @Inject(BudgetRepository) private readonly budgets: BudgetRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(BudgetWatcher) private readonly watcher: BudgetWatcher,
  ) {}

  /** Every budget with its use in the current period (members: their teams'). */
  @Get('budgets')
  async list(@Caller() caller: Principal): Promise<unknown> {
    return { items: (await this.accounting.budgetStatuses(caller, new Date())).map(budgetView) };
  }

  @Get('teams/:team/budgets')
  async ofTeam(@Param('team', NamePipe) team: string, @Caller() caller: Principal): Promise<unknown> {
    const items = await this.accounting.budgetStatuses(caller, new Date(), team);
    if (items.length === 0 && (await this.teams.missing([team])).length > 0) throw notFound(`team ${team}`);
    return { items: items.map(budgetView) };
  }

  @Get('teams/:team/budgets/:period')
  async get(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<unknown> {
    const b = (await this.accounting.budgetStatuses(caller, new Date(), team)).find((x) => x.period === period);
    if (b === undefined) throw notFound(`${period} budget of team ${team}`);
    return budgetView(b);
  }

  /** Sets a team's budget for a period kind (admin); the change is an audited event, like a quota's. */
  @Put('teams/:team/budgets/:period')
  @AdminOnly()
  async put(
    @Param('team', NamePipe) team: string,
    @Param('period', PeriodPipe) period: PeriodKind,
    @Body() dto: PutBudgetDto,
    @Caller() caller: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    if ((await this.teams.missing([team])).length > 0) throw unknownReference('team', `unknown team: ${team}`);
    let change;
    try {
      change = await this.budgets.put({ team, period, limit: dto.limit, unit: dto.unit, onExhausted: dto.onExhausted }, caller.subject);
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) throw unknownReference('team', `unknown team: ${team}`);
      throw error;
    }
    // A budget set below what the team already used warns (and blocks) at once, not at the next check.
    await this.watcher.check([team]);
    const status = (await this.budgets.statuses(new Date(), [team])).find((b) => b.period === period);
    void reply.status(change.before === null ? 201 : 200);
    return { ...(status ? budgetView(status) : recordView(change.after)), before: recordView(change.before), eventId: change.eventId };
  }

  @Delete('teams/:team/budgets/:period')
  @AdminOnly()
  async delete(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<unknown> {
    const change = await this.budgets.delete(team, period, caller.subject);
    if (!change) throw notFound(`${period} budget of team ${team}`);
    return { team, period, before: recordView(change.before), after: null, eventId: change.eventId };
  }
}
