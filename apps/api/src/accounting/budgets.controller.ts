import { Body, Controller, Delete, Get, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { PeriodKind } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutBudgetDto } from './accounting.dto.js';
import { BudgetDeletedView, BudgetListView, BudgetSetView, BudgetView } from './accounting.view.js';
import { BudgetsService } from './budgets.service.js';
import { PeriodPipe } from './period.pipe.js';

@ApiTags('accounting')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class BudgetsController {
  constructor(@Inject(BudgetsService) private readonly budgets: BudgetsService) {}

  /** Every budget with its use in the current period (members: their teams'). */
  @Get('budgets')
  @Answers(BudgetListView)
  async list(@Caller() caller: Principal): Promise<BudgetListView> {
    return { items: await this.budgets.list(caller) };
  }

  @Get('teams/:team/budgets')
  @Answers(BudgetListView)
  async ofTeam(@Param('team', NamePipe) team: string, @Caller() caller: Principal): Promise<BudgetListView> {
    return { items: await this.budgets.ofTeam(team, caller) };
  }

  @Get('teams/:team/budgets/:period')
  @Answers(BudgetView)
  get(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<BudgetView> {
    return this.budgets.get(team, period, caller);
  }

  /** Sets a team's budget for a period kind (admin); the change is an audited event, like a quota's. 201 when created, 200 when changed. */
  @Put('teams/:team/budgets/:period')
  @AdminOnly()
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
  @Answers(BudgetDeletedView)
  delete(@Param('team', NamePipe) team: string, @Param('period', PeriodPipe) period: PeriodKind, @Caller() caller: Principal): Promise<BudgetDeletedView> {
    return this.budgets.delete(team, period, caller);
  }
}
