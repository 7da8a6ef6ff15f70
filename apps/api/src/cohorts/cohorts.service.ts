import { Inject, Injectable } from '@nestjs/common';
import { AppError, notFound } from '#common';
import { CohortRepository } from '#db';
import type { Principal } from '../auth/principal.js';
import { UsageService } from '../teams/usage.service.js';
import { cohortView, type CohortView } from './cohort.view.js';

/** Cohorts with their members' usage summed per flavor; deleted only without members. */
@Injectable()
export class CohortsService {
  constructor(
    @Inject(CohortRepository) private readonly cohorts: CohortRepository,
    @Inject(UsageService) private readonly usage: UsageService,
  ) {}

  async put(name: string, description: string, caller: Principal): Promise<{ created: boolean; cohort: CohortView }> {
    const { record, created } = await this.cohorts.upsert(name, description, caller.subject);
    return { created, cohort: cohortView(record, await this.usage.byTeam()) };
  }

  async list(): Promise<CohortView[]> {
    const [cohorts, usage] = await Promise.all([this.cohorts.list(), this.usage.byTeam()]);
    return cohorts.map((c) => cohortView(c, usage));
  }

  async get(name: string): Promise<CohortView> {
    const [cohort, usage] = await Promise.all([this.cohorts.get(name), this.usage.byTeam()]);
    if (!cohort) throw notFound(`cohort ${name}`);
    return cohortView(cohort, usage);
  }

  /** 409 IN_USE naming the member teams (move them out with PATCH /v1/teams/{name} { "cohort": null } first). */
  async delete(name: string, caller: Principal): Promise<void> {
    const result = await this.cohorts.delete(name, caller.subject);
    if (result.outcome === 'missing') throw notFound(`cohort ${name}`);
    if (result.outcome === 'in-use') {
      const { members } = result.use;
      throw new AppError(
        'IN_USE',
        `cohort ${name} still has member team(s) ${members.join(', ')}: move them out first (PATCH /v1/teams/{team} {"cohort": null}; qm team set TEAM --cohort none)`,
      );
    }
  }
}
