import { Inject, Injectable } from '@nestjs/common';
import { AppError, Config, notFound, unknownReference, type FieldError } from '#common';
import { teamNamespaces, type TeamFlavorUsage } from '#core';
import { CohortRepository, FlavorRepository, MissingReferenceError, PriorityClassRepository, QuotaRepository, TeamRepository, type TeamRecord, type TeamUse } from '#db';
import type { Principal } from '../auth/principal.js';
import { ClusterNamespaces } from '../jobs/cluster-namespaces.js';
import { PriorityChoiceCache } from '../jobs/priority-choices.js';
import { TeamSettingsCache } from '../jobs/submission-limits.js';
import type { PatchTeamDto, PutQuotaDto, PutTeamDto, TeamLimitsDto } from './team.dto.js';
import { quotaView, teamView as viewOf, type LimitDefaults, type QuotaDeletedView, type QuotaSetView, type TeamView } from './team.view.js';
import { UsageService } from './usage.service.js';

/** Teams and their quotas: create, replace, merge, delete unless in use; every change audited. */
@Injectable()
export class TeamsService {
  constructor(
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(CohortRepository) private readonly cohorts: CohortRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
    @Inject(QuotaRepository) private readonly quotas: QuotaRepository,
    @Inject(UsageService) private readonly usage: UsageService,
    @Inject(PriorityClassRepository) private readonly classes: PriorityClassRepository,
    @Inject(PriorityChoiceCache) private readonly choices: PriorityChoiceCache,
    @Inject(TeamSettingsCache) private readonly limits: TeamSettingsCache,
    @Inject(ClusterNamespaces) private readonly namespaces: ClusterNamespaces,
    @Inject(Config) config: Config,
  ) {
    this.limitDefaults = { maxPendingJobs: config.teamMaxPendingJobs, submissionsPerSecond: config.teamSubmissionsPerSecond };
  }

  private readonly limitDefaults: LimitDefaults;

  private teamView(t: TeamRecord, usage: readonly TeamFlavorUsage[]): TeamView {
    return viewOf(t, usage, this.limitDefaults);
  }

  /**
   * Creates a team (absent fields take their defaults) or replaces one: replacing an existing team needs
   * every field (400 naming each missing one) — a partial body would otherwise reset what it leaves out.
   */
  async put(name: string, dto: PutTeamDto, caller: Principal): Promise<{ created: boolean; team: TeamView }> {
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
    await this.assertNotOwnNamespace(name, dto.namespaces);
    await this.assertCohort(cohort);
    await this.assertPriorityClass(dto.maxPriorityClass ?? null);
    const { record, created } = await this.teams
      .upsert(name, {
        cohort,
        fairShareWeight: dto.fairShareWeight ?? TEAM_DEFAULTS.fairShareWeight,
        withinTeam: dto.preemption?.withinTeam ?? TEAM_DEFAULTS.withinTeam,
        reclaimWithinCohort: dto.preemption?.reclaimWithinCohort ?? TEAM_DEFAULTS.reclaimWithinCohort,
        maxPriorityClass: dto.maxPriorityClass ?? null,
        ...limitChanges(dto.limits),
        ...(dto.podPolicy !== undefined ? { podPolicy: dto.podPolicy } : {}),
        ...(dto.namespaces !== undefined ? { namespaces: dto.namespaces ?? [] } : {}),
      }, caller.subject)
      .catch(unknownTeamReference);
    this.choices.invalidate();
    this.limits.invalidate();
    return { created, team: this.teamView(record, (await this.usage.byTeam()).get(name) ?? []) };
  }

  /** Merge: changes the fields sent (`cohort: null` leaves the cohort; null elsewhere restores the default), keeps the others. 404 for an unknown team. */
  async patch(name: string, dto: PatchTeamDto, caller: Principal): Promise<TeamView> {
    const cohort = dto.cohort;
    if (dto.namespaces !== undefined) await this.assertNotOwnNamespace(name, dto.namespaces);
    if (typeof cohort === 'string') await this.assertCohort(cohort);
    if (typeof dto.maxPriorityClass === 'string') await this.assertPriorityClass(dto.maxPriorityClass);
    const record = await this.teams
      .patch(name, {
        ...(cohort !== undefined ? { cohort } : {}),
        ...(dto.fairShareWeight !== undefined ? { fairShareWeight: dto.fairShareWeight ?? TEAM_DEFAULTS.fairShareWeight } : {}),
        ...(dto.preemption?.withinTeam !== undefined ? { withinTeam: dto.preemption.withinTeam ?? TEAM_DEFAULTS.withinTeam } : {}),
        ...(dto.preemption?.reclaimWithinCohort !== undefined ? { reclaimWithinCohort: dto.preemption.reclaimWithinCohort ?? TEAM_DEFAULTS.reclaimWithinCohort } : {}),
        ...(dto.maxPriorityClass !== undefined ? { maxPriorityClass: dto.maxPriorityClass } : {}),
        ...limitChanges(dto.limits),
        ...(dto.podPolicy !== undefined ? { podPolicy: dto.podPolicy } : {}),
        ...(dto.namespaces !== undefined ? { namespaces: dto.namespaces ?? [] } : {}),
      }, caller.subject)
      .catch(unknownTeamReference);
    this.choices.invalidate();
    this.limits.invalidate();
    if (!record) throw notFound(`team ${name}`);
    return this.teamView(record, (await this.usage.byTeam()).get(name) ?? []);
  }

  /**
   * 409 naming what still uses the team (unfinished jobs, quotas, budgets, pending side effects of its
   * jobs). Its finished jobs go with it; the usage ledger and the audit trail keep their history.
   */
  async delete(name: string, caller: Principal): Promise<void> {
    const result = await this.teams.delete(name, caller.subject);
    if (result.outcome === 'missing') throw notFound(`team ${name}`);
    if (result.outcome === 'in-use') throw new AppError('IN_USE', teamInUseDetail(name, result.use));
  }

  /**
   * A team's namespaces (those sent; none sent or an empty list: its name) may not include Quartermaster's own,
   * where its ServiceAccount and Secrets are: 400 naming the field.
   */
  private async assertNotOwnNamespace(team: string, namespaces: readonly string[] | null | undefined): Promise<void> {
    const listed = namespaces ?? [];
    const effective = teamNamespaces(team, listed);
    const errors: FieldError[] = [];
    for (const [i, refusal] of (await this.namespaces.teamRefusals(effective)).entries()) {
      if (refusal !== null) errors.push({ field: listed.length > 0 ? `namespaces[${i}]` : 'namespaces', message: listed.length > 0 ? refusal : `(none listed: the team's name) ${refusal}` });
    }
    if (errors.length > 0) throw new AppError('VALIDATION_FAILED', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  }

  async list(): Promise<TeamView[]> {
    const [teams, usage] = await Promise.all([this.teams.list(), this.usage.byTeam()]);
    return teams.map((t) => this.teamView(t, usage.get(t.name) ?? []));
  }

  async get(name: string): Promise<TeamView> {
    const [team, usage] = await Promise.all([this.teams.get(name), this.usage.byTeam()]);
    if (!team) throw notFound(`team ${name}`);
    return this.teamView(team, usage.get(name) ?? []);
  }

  /** Sets a quota; the change is recorded as an event (who, when, before, after). */
  async putQuota(team: string, flavor: string, dto: PutQuotaDto, caller: Principal): Promise<{ created: boolean; quota: QuotaSetView }> {
    await this.assertReferences(team, flavor);
    const change = await this.quotas
      .put(
        {
          team,
          flavor,
          nominal: dto.nominal,
          borrowingLimit: dto.borrowingLimit ?? null,
          lendingLimit: dto.lendingLimit ?? null,
          cpuMillisLimit: dto.cpuMillisLimit ?? null,
          memoryMiBLimit: dto.memoryMiBLimit ?? null,
        },
        caller.subject,
      )
      .catch(async (error: unknown) => {
        // Deleted between the check and the write: name what is missing now.
        if (error instanceof MissingReferenceError) await this.assertReferences(team, flavor);
        throw error;
      });
    return {
      created: change.before === null,
      quota: { ...quotaView(change.after!), before: change.before && quotaView(change.before), eventId: change.eventId },
    };
  }

  async deleteQuota(team: string, flavor: string, caller: Principal): Promise<QuotaDeletedView> {
    const change = await this.quotas.delete(team, flavor, caller.subject);
    if (!change) throw notFound(`quota of team ${team} for flavor ${flavor}`);
    return { team, flavor, before: quotaView(change.before!), after: null, eventId: change.eventId };
  }

  private async assertCohort(cohort: string | null): Promise<void> {
    if (cohort !== null && !(await this.cohorts.exists(cohort))) throw unknownReference('cohort', `unknown cohort: ${cohort}`);
  }

  private async assertPriorityClass(name: string | null): Promise<void> {
    if (name !== null && (await this.classes.get(name)) === null) {
      throw unknownReference('maxPriorityClass', `unknown priority class: ${name} (GET /v1/priority-classes lists them)`);
    }
  }

  /** 422 naming each of the team and flavor that does not exist. */
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

/** What a team gets for a field it is not given (or given as null). */
const TEAM_DEFAULTS = { fairShareWeight: 1, withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } as const;

/**
 * The limits a PUT or PATCH changes: each one sent (null: back to the default), none for `limits` absent,
 * both back to their defaults for `limits: null`.
 */
function limitChanges(limits: TeamLimitsDto | null | undefined): { maxPendingJobs?: number | null; submissionsPerSecond?: number | null } {
  if (limits === undefined) return {};
  if (limits === null) return { maxPendingJobs: null, submissionsPerSecond: null };
  return {
    ...(limits.maxPendingJobs !== undefined ? { maxPendingJobs: limits.maxPendingJobs } : {}),
    ...(limits.submissionsPerSecond !== undefined ? { submissionsPerSecond: limits.submissionsPerSecond } : {}),
  };
}

/** The cohort was deleted between the check and the write: 422 as if the check had seen it. */
function unknownTeamReference(error: unknown): never {
  if (error instanceof MissingReferenceError) {
    throw unknownReference(error.field, error.field === 'cohort' ? `unknown cohort: ${error.value}` : `unknown priority class: ${error.value} (GET /v1/priority-classes lists them)`);
  }
  throw error;
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
