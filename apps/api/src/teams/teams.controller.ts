import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PatchTeamDto, PutQuotaDto, PutTeamDto } from './team.dto.js';
import { QuotaDeletedView, QuotaSetView, TeamListView, TeamView } from './team.view.js';
import { TeamsService } from './teams.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('tenancy')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/teams')
export class TeamsController {
  constructor(@Inject(TeamsService) private readonly teams: TeamsService) {}

  /**
   * Creates a team (absent fields take their defaults) or replaces one: PUT replaces the whole team, so
   * replacing an existing team needs every field (400 naming each missing one) — a partial body would
   * otherwise reset what it leaves out. PATCH changes only the fields sent. 201 when created, 200 when replaced.
   */
  @Put(':name')
  @AdminOnly()
  @Answers(TeamView, 200, 201)
  async put(
    @Param('name', NamePipe) name: string,
    @Body() dto: PutTeamDto,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ): Promise<TeamView> {
    const { created, team } = await this.teams.put(name, dto, caller);
    void reply.status(created ? 201 : 200);
    return team;
  }

  /** Merge: changes the fields sent (`cohort: null` leaves the cohort), keeps the others. 404 for an unknown team. */
  @Patch(':name')
  @AdminOnly()
  @Answers(TeamView)
  patch(@Param('name', NamePipe) name: string, @Body() dto: PatchTeamDto, @Caller() caller: Principal): Promise<TeamView> {
    return this.teams.patch(name, dto, caller);
  }

  /**
   * 204, or 409 naming what still uses the team (unfinished jobs, quotas, budgets, pending side effects of
   * its jobs). Its finished jobs go with it; the usage ledger and the audit trail keep their history.
   */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.teams.delete(name, caller);
  }

  /** Every team with its quotas and live usage (members read every team, as capacity is shared). */
  @Get()
  @Answers(TeamListView)
  async list(): Promise<TeamListView> {
    return { items: await this.teams.list() };
  }

  @Get(':name')
  @Answers(TeamView)
  get(@Param('name', NamePipe) name: string): Promise<TeamView> {
    return this.teams.get(name);
  }

  /** Sets a quota; the change is recorded as an event (who, when, before, after). 201 when created, 200 when changed. */
  @Put(':team/quotas/:flavor')
  @AdminOnly()
  @Answers(QuotaSetView, 200, 201)
  async putQuota(
    @Param('team', NamePipe) team: string,
    @Param('flavor', NamePipe) flavor: string,
    @Body() dto: PutQuotaDto,
    @Caller() caller: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<QuotaSetView> {
    const { created, quota } = await this.teams.putQuota(team, flavor, dto, caller);
    void reply.status(created ? 201 : 200);
    return quota;
  }

  @Delete(':team/quotas/:flavor')
  @AdminOnly()
  @Answers(QuotaDeletedView)
  deleteQuota(@Param('team', NamePipe) team: string, @Param('flavor', NamePipe) flavor: string, @Caller() caller: Principal): Promise<QuotaDeletedView> {
    return this.teams.deleteQuota(team, flavor, caller);
  }
}
