import { Body, Controller, Delete, Get, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { PeriodKind } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { BUDGET_PERIODS, PutBudgetDto } from './accounting.dto.js';
import { BudgetDeletedView, BudgetListView, BudgetSetView, BudgetView } from './accounting.view.js';
import { BudgetsService } from './budgets.service.js';
import { PeriodPipe } from './period.pipe.js';

/** The `{period}` path parameter (PeriodPipe): one of day, week, month. */
const PeriodParam = (): MethodDecorator => ApiParam({ name: 'period', enum: BUDGET_PERIODS, description: 'The period kind the budget counts over (UTC).' });

@ApiTags('accounting')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class BudgetsController {
  constructor(@Inject(BudgetsService) private readonly budgets: BudgetsService) {}

  @Get('budgets')
  @ApiOperation({
    summary: 'List budgets with their use in the current period',
    description:
      "Every budget with what its team used in the current period (day, week or month, UTC). Admins see every team's budgets, members their own teams' only.",
  })
  @Answers(BudgetListView)
  async list(@Caller() caller: Principal): Promise<BudgetListView> {
    return { items: await this.budgets.list(caller) };
  }

  @Get('teams/:team/budgets')
  @ApiOperation({
    summary: "List a team's budgets with their use in the current period",
    description:
      'The budgets of one team (at most one per period kind) with their use in the current period; an empty list when it has none. ' +
      'Admins, and members of the team (403 for another team). 404 for an unknown team.',
  })
  @Answers(BudgetListView)
  async ofTeam(@Param('team', NamePipe) team: string, @Caller() caller: Principal): Promise<BudgetListView> {
    return { items: await this.budgets.ofTeam(team, caller) };
  }

  @Get('teams/:team/budgets/:period')
  @PeriodParam()
  @ApiOperation({
    summary: "Get a team's budget for one period kind",
    description:
      "The team's day, week or month budget with its use in the current period. Admins, and members of the team (403 for another team). " +
      '404 when the team does not exist or has no budget for that period kind; 400 for a period other than day, week or month.',
  })
  @Answers(BudgetView)
  get(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<BudgetView> {
    return this.budgets.get(team, period, caller);
  }

  @Put('teams/:team/budgets/:period')
  @AdminOnly()
  @PeriodParam()
  @ApiOperation({
    summary: "Set a team's budget for a period kind",
    description:
      "Admin only. Creates or replaces the team's day, week or month budget; the change is an audited event (who, when, before, after), like a quota's, " +
      'and the answer carries `before` and the `eventId`. The budget is checked at once: one set at or below what the team already used this period ' +
      'records its budget.warning / budget.exhausted events now, not at the next periodic check. What a used-up budget does to the team\'s running jobs is ' +
      'onExhausted\'s (whenExhausted in the answer): warn and block let them go on; stop requeues them at the next scheduling cycle. ' +
      '201 when created, 200 when changed; 422 for an unknown team.',
  })
  @Answers(BudgetSetView, 200, 201)
  async put(
    @Param('team', NamePipe) team: string,
    @Param('period', PeriodPipe) period: PeriodKind,
    @Body() dto: PutBudgetDto,
    @Caller() caller: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BudgetSetView> {
    const { created, budget } = await this.budgets.put(team, period, dto, caller);
    void reply.status(created ? 201 : 200);
    return budget;
  }

  @Delete('teams/:team/budgets/:period')
  @AdminOnly()
  @PeriodParam()
  @ApiOperation({
    summary: "Delete a team's budget for a period kind",
    description:
      'Admin only. Removes the budget; the change is an audited event, and the answer (200) carries the budget as it was (`before`, `after: null`) and the `eventId`. ' +
      '404 when the team has no budget for that period kind.',
  })
  @Answers(BudgetDeletedView)
  delete(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<BudgetDeletedView> {
    return this.budgets.delete(team, period, caller);
  }
}
