import { Body, Controller, Delete, Get, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound, unknownReference } from '#common';
import { CohortRepository, FlavorRepository, pgCode, PG_FOREIGN_KEY_VIOLATION, QuotaRepository, type QuotaRecord, TeamRepository, type TeamRecord } from '#db';
import type { TeamFlavorUsage } from '#core';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutQuotaDto, PutTeamDto } from './team.dto.js';
import { UsageService, usageView } from './usage.service.js';
import { ApiProblems } from '../problem.doc.js';

const teamView = (t: TeamRecord, usage: TeamFlavorUsage[]): unknown => ({
  name: t.name,
  cohort: t.cohort,
  fairShareWeight: t.fairShareWeight,
  preemption: { withinTeam: t.withinTeam, reclaimWithinCohort: t.reclaimWithinCohort },
  quotas: usage.map(usageView),
  createdAt: t.createdAt.toISOString(),
  updatedAt: t.updatedAt.toISOString(),
});

const quotaView = (q: QuotaRecord | null): unknown =>
  q === null ? null : { team: q.team, flavor: q.flavor, nominal: q.nominal, borrowingLimit: q.borrowingLimit, lendingLimit: q.lendingLimit };

@ApiTags('tenancy')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/teams')
export class TeamsController {
  constructor(
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(CohortRepository) private readonly cohorts: CohortRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
    @Inject(QuotaRepository) private readonly quotas: QuotaRepository,
    @Inject(UsageService) private readonly usage: UsageService,
  ) {}

  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NamePipe) name: string, @Body() dto: PutTeamDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const cohort = dto.cohort ?? null;
    if (cohort !== null && !(await this.cohorts.exists(cohort))) throw unknownReference('cohort', `unknown cohort: ${cohort}`);
    try {
      const { record, created } = await this.teams.upsert(name, {
        cohort,
        fairShareWeight: dto.fairShareWeight ?? 1,
        withinTeam: dto.preemption?.withinTeam ?? 'LowerPriority',
        reclaimWithinCohort: dto.preemption?.reclaimWithinCohort ?? 'Any',
      });
      void reply.status(created ? 201 : 200);
      return teamView(record, (await this.usage.byTeam()).get(name) ?? []);
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) throw unknownReference('cohort', `unknown cohort: ${cohort}`);
      throw error;
    }
  }

  /** Every team with its quotas and live usage (members read every team, as capacity is shared). */
  @Get()
  async list(): Promise<unknown> {
    const [teams, usage] = await Promise.all([this.teams.list(), this.usage.byTeam()]);
    return { items: teams.map((t) => teamView(t, usage.get(t.name) ?? [])) };
  }

  @Get(':name')
  async get(@Param('name', NamePipe) name: string): Promise<unknown> {
    const [team, usage] = await Promise.all([this.teams.get(name), this.usage.byTeam()]);
    if (!team) throw notFound(`team ${name}`);
    return teamView(team, usage.get(name) ?? []);
  }

  /** Sets a quota; the change is recorded as an event (who, when, before, after). */
  @Put(':team/quotas/:flavor')
  @AdminOnly()
  async putQuota(
    @Param('team', NamePipe) team: string,
    @Param('flavor', NamePipe) flavor: string,
    @Body() dto: PutQuotaDto,
    @Caller() caller: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    await this.assertReferences(team, flavor);
    try {
      const change = await this.quotas.put(
        { team, flavor, nominal: dto.nominal, borrowingLimit: dto.borrowingLimit ?? null, lendingLimit: dto.lendingLimit ?? null },
        caller.subject,
      );
      void reply.status(change.before === null ? 201 : 200);
      return { ...(quotaView(change.after) as object), before: quotaView(change.before), eventId: change.eventId };
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) await this.assertReferences(team, flavor);
      throw error;
    }
  }

  @Delete(':team/quotas/:flavor')
  @AdminOnly()
  async deleteQuota(@Param('team', NamePipe) team: string, @Param('flavor', NamePipe) flavor: string, @Caller() caller: Principal): Promise<unknown> {
    const change = await this.quotas.delete(team, flavor, caller.subject);
    if (!change) throw notFound(`quota of team ${team} for flavor ${flavor}`);
    return { team, flavor, before: quotaView(change.before), after: null, eventId: change.eventId };
  }

  private async assertReferences(team: string, flavor: string): Promise<void> {
    const [teamMissing, flavorMissing] = await Promise.all([this.teams.missing([team]), this.flavors.missing([flavor])]);
    const errors = [
      ...(teamMissing.length ? [{ field: 'team', message: `unknown team: ${team}` }] : []),
      ...(flavorMissing.length ? [{ field: 'flavor', message: `unknown flavor: ${flavor}` }] : []),
    ];
    if (errors.length > 0) {
      const e = unknownReference(errors[0]!.field, errors[0]!.message);
      e.errors.splice(0, e.errors.length, ...errors);
      throw e;
    }
  }
}
