import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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

  @Put(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Create or replace a team',
    description:
      'Admin only. Creates a team (absent fields take their defaults) or replaces one: PUT replaces the whole team, so replacing an existing team ' +
      'needs every field (400 naming each missing one) — a partial body would otherwise reset what it leaves out; PATCH changes only the fields sent. ' +
      '422 for an unknown cohort. 201 when created, 200 when replaced.',
  })
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

  @Patch(':name')
  @AdminOnly()
  @ApiOperation({
    summary: "Change some of a team's fields",
    description:
      'Admin only. Merge: changes the fields sent (`cohort: null` takes the team out of its cohort), keeps the others. ' +
      '404 for an unknown team, 422 for an unknown cohort.',
  })
  @Answers(TeamView)
  patch(@Param('name', NamePipe) name: string, @Body() dto: PatchTeamDto, @Caller() caller: Principal): Promise<TeamView> {
    return this.teams.patch(name, dto, caller);
  }

  @Delete(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete a team that nothing uses',
    description:
      'Admin only. 204, or 409 naming what still uses the team (unfinished jobs, quotas, budgets, pending side effects of its jobs). ' +
      'Its finished jobs go with it; the usage ledger and the audit trail keep their history. 404 for an unknown team.',
  })
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.teams.delete(name, caller);
  }

  @Get()
  @ApiOperation({
    summary: 'List teams with their quotas and usage',
    description: 'Every team with its cohort, fair-share weight, preemption policy, and per flavor its quota and live usage. Admins and members (members read every team, as capacity is shared).',
  })
  @Answers(TeamListView)
  async list(): Promise<TeamListView> {
    return { items: await this.teams.list() };
  }

  @Get(':name')
  @ApiOperation({
    summary: 'Get a team with its quotas and usage',
    description: "The team's cohort, fair-share weight, preemption policy, and per flavor its quota and live usage. Admins and members (of any team); 404 for an unknown team.",
  })
  @Answers(TeamView)
  get(@Param('name', NamePipe) name: string): Promise<TeamView> {
    return this.teams.get(name);
  }

  @Put(':team/quotas/:flavor')
  @AdminOnly()
  @ApiOperation({
    summary: "Set a team's quota for a flavor",
    description:
      'Admin only. Sets the nominal (guaranteed) accelerators of the team on the flavor and how much it may borrow and lend within its cohort; the change ' +
      'is an audited event (who, when, before, after), and the answer carries `before` and the `eventId`. 201 when created, 200 when changed; 422 naming each unknown team or flavor.',
  })
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
  @ApiOperation({
    summary: "Delete a team's quota for a flavor",
    description:
      'Admin only. Removes the quota; the change is an audited event, and the answer (200) carries the quota as it was (`before`, `after: null`) and the `eventId`. ' +
      '404 when the team has no quota for that flavor.',
  })
  @Answers(QuotaDeletedView)
  deleteQuota(@Param('team', NamePipe) team: string, @Param('flavor', NamePipe) flavor: string, @Caller() caller: Principal): Promise<QuotaDeletedView> {
    return this.teams.deleteQuota(team, flavor, caller);
  }
}
