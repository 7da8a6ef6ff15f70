import { Inject, Injectable } from '@nestjs/common';
import { AppError, forbidden, notFound } from '#common';
import { JobHoldsRepository, JobRepository } from '#db';
import { canActForTeam, isAdmin, type Principal } from '../auth/principal.js';
import type { HoldJobsDto } from './job.dto.js';
import { jobView, type JobDetailView, type JobHoldsView } from './job.view.js';
import { JobsService } from './jobs.service.js';

/**
 * Holds and releases (Slurm's `scontrol hold` / `release`): a held PENDING job is passed over by the scheduler
 * until released, keeping its place. Members hold and release their teams' jobs; a hold by an admin is released
 * by an admin only.
 */
@Injectable()
export class JobHoldsService {
  constructor(
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(JobRepository) private readonly records: JobRepository,
    @Inject(JobHoldsRepository) private readonly holds: JobHoldsRepository,
  ) {}

  async hold(id: string, caller: Principal): Promise<JobDetailView> {
    const job = await this.jobs.get(id, caller);
    if (!canActForTeam(caller, job.team)) throw forbidden(`${caller.subject} may not hold jobs of team ${job.team}`);
    const change = await this.holds.hold(id, caller.subject, isAdmin(caller));
    if (change.kind === 'not-pending') {
      throw new AppError('CONFLICT', `job ${id} is ${change.state}: only a PENDING job can be held (cancel one that holds accelerators)`);
    }
    return this.answer(id, change.kind);
  }

  async release(id: string, caller: Principal): Promise<JobDetailView> {
    const job = await this.jobs.get(id, caller);
    if (!canActForTeam(caller, job.team)) throw forbidden(`${caller.subject} may not release jobs of team ${job.team}`);
    const change = await this.holds.release(id, caller.subject, isAdmin(caller));
    if (change.kind === 'admin-hold') throw forbidden(`job ${id} was held by an admin (${change.heldBy}): only an admin releases it`);
    return this.answer(id, change.kind);
  }

  async holdMatching(dto: HoldJobsDto, caller: Principal): Promise<JobHoldsView> {
    return this.matching('hold', dto, caller);
  }

  async releaseMatching(dto: HoldJobsDto, caller: Principal): Promise<JobHoldsView> {
    return this.matching('release', dto, caller);
  }

  private async matching(what: 'hold' | 'release', dto: HoldJobsDto, caller: Principal): Promise<JobHoldsView> {
    if (!canActForTeam(caller, dto.team)) throw forbidden(`${caller.subject} may not ${what} jobs of team ${dto.team}`);
    const filter = { team: dto.team, ...(dto.name === undefined ? {} : { name: dto.name }), ...(dto.createdBy === undefined ? {} : { createdBy: dto.createdBy }) };
    const dryRun = dto.dryRun === true;
    const run = what === 'hold' ? this.holds.holdMatching.bind(this.holds) : this.holds.releaseMatching.bind(this.holds);
    const { jobs, more } = await run(filter, dto.limit ?? 1000, caller.subject, isAdmin(caller), dryRun);
    return { changed: dryRun ? 0 : jobs.length, jobs, more, dryRun };
  }

  private async answer(id: string, kind: 'missing' | 'changed' | 'unchanged'): Promise<JobDetailView> {
    const job = kind === 'missing' ? null : await this.records.get(id);
    if (job === null) throw notFound(`job ${id}`);
    return jobView(job);
  }
}
