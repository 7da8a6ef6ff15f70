import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppError, notFound, unknownReference, type FieldError } from '#common';
import { CohortRepository, FlavorRepository, pgCode, PG_FOREIGN_KEY_VIOLATION, QuotaRepository, type QuotaRecord, TeamRepository, type TeamRecord, type TeamUse } from '#db';
import type { TeamFlavorUsage } from '#core';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PatchTeamDto, PutQuotaDto, PutTeamDto } from './team.dto.js';
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

  /**
   * Creates a team (absent fields take their defaults) or replaces one: PUT replaces the whole team, so
   * replacing an existing team needs every field (400 naming each missing one) — a partial body would
   * otherwise reset what it leaves out. PATCH changes only the fields sent.
   */
  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NamePipe) name: string, @Body() dto: PutTeamDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    if (await this.teams.get(name)) {
      const missing = missingForReplace(dto);
      if (missing.length > 0) {
        throw new AppError(
          'VALIDATION_FAILED',
          `PUT replaces team ${name} as a whole: send ${missing.map((e) => e.field).join(', ')} too, or change only some fields with PATCH /v1/teams/${name}`,
          missing,
        );
      }
    }
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

  /** Merge: changes the fields sent (`cohort: null` leaves the cohort), keeps the others. 404 for an unknown team. */
  @Patch(':name')
  @AdminOnly()
  async patch(@Param('name', NamePipe) name: string, @Body() dto: PatchTeamDto): Promise<unknown> {
    const cohort = dto.cohort;
    if (typeof cohort === 'string' && !(await this.cohorts.exists(cohort))) throw unknownReference('cohort', `unknown cohort: ${cohort}`);
    try {
      const record = await this.teams.patch(name, {
        ...(cohort !== undefined ? { cohort } : {}),
        ...(dto.fairShareWeight !== undefined ? { fairShareWeight: dto.fairShareWeight } : {}),
        ...(dto.preemption?.withinTeam !== undefined ? { withinTeam: dto.preemption.withinTeam } : {}),
        ...(dto.preemption?.reclaimWithinCohort !== undefined ? { reclaimWithinCohort: dto.preemption.reclaimWithinCohort } : {}),
      });
      if (!record) throw notFound(`team ${name}`);
      return teamView(record, (await this.usage.byTeam()).get(name) ?? []);
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) throw unknownReference('cohort', `unknown cohort: ${String(cohort)}`);
      throw error;
    }
  }

  /**
   * 204, or 409 naming what still uses the team (unfinished jobs, quotas, budgets, pending side effects of
   * its jobs). Its finished jobs go with it; the usage ledger and the audit trail keep their history.
   */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  async delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    const result = await this.teams.delete(name, caller.subject);
    if (result.outcome === 'missing') throw notFound(`team ${name}`);
    if (result.outcome === 'in-use') throw new AppError('IN_USE', teamInUseDetail(name, result.use));
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

/** Fields a replacing PUT must carry (every field of the team; `cohort` may be null). */
function missingForReplace(dto: PutTeamDto): FieldError[] {
  const missing: FieldError[] = [];
  const required = 'required when replacing an existing team (or use PATCH)';
  if (dto.cohort === undefined) missing.push({ field: 'cohort', message: `${required}; null for none` });
  if (dto.fairShareWeight === undefined) missing.push({ field: 'fairShareWeight', message: required });
  if (dto.preemption?.withinTeam === undefined) missing.push({ field: 'preemption.withinTeam', message: required });
  if (dto.preemption?.reclaimWithinCohort === undefined) missing.push({ field: 'preemption.reclaimWithinCohort', message: required });
  return missing;
}

function teamInUseDetail(name: string, use: TeamUse): string {
  const parts: string[] = [];
  if (use.unfinishedJobs > 0) parts.push(`${use.unfinishedJobs} unfinished job(s) (cancel them or let them finish)`);
  if (use.quotas.length > 0) parts.push(`quota(s) for ${use.quotas.join(', ')} (DELETE /v1/teams/${name}/quotas/{flavor}; qm quota rm ${name} FLAVOR)`);
  if (use.budgets.length > 0) parts.push(`budget(s) for the ${use.budgets.join(', ')} period (qm budget rm ${name} --period PERIOD)`);
  if (use.pendingSideEffects > 0) parts.push(`${use.pendingSideEffects} side effect(s) of its jobs still being carried out (retry shortly)`);
  return `team ${name} is still used by ${parts.join('; ')}: remove those first`;
}
