import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { TeamFlavorUsage } from '#core';
import { AppError, notFound } from '#common';
import { CohortRepository, type CohortRecord } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { UsageService } from '../teams/usage.service.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutCohortDto } from './cohort.dto.js';
import { ApiProblems } from '../problem.doc.js';

/** Per flavor: capacity = Σ members' nominal quota; used/borrowed/lent/pendingDemand summed over members. */
function cohortView(c: CohortRecord, usage: Map<string, TeamFlavorUsage[]>): unknown {
  const perFlavor = new Map<string, { flavor: string; capacity: number; used: number; borrowed: number; lent: number; pendingDemand: number }>();
  for (const team of c.members) {
    for (const u of usage.get(team) ?? []) {
      const f = perFlavor.get(u.flavor) ?? { flavor: u.flavor, capacity: 0, used: 0, borrowed: 0, lent: 0, pendingDemand: 0 };
      f.capacity += u.nominal;
      f.used += u.used;
      f.borrowed += u.borrowed;
      f.lent += u.lent;
      f.pendingDemand += u.pendingDemand;
      perFlavor.set(u.flavor, f);
    }
  }
  return {
    name: c.name,
    description: c.description,
    members: c.members,
    flavors: [...perFlavor.values()].sort((a, b) => (a.flavor < b.flavor ? -1 : 1)),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

@ApiTags('tenancy')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/cohorts')
export class CohortsController {
  constructor(
    @Inject(CohortRepository) private readonly cohorts: CohortRepository,
    @Inject(UsageService) private readonly usage: UsageService,
  ) {}

  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NamePipe) name: string, @Body() dto: PutCohortDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const { record, created } = await this.cohorts.upsert(name, dto.description ?? '');
    void reply.status(created ? 201 : 200);
    return cohortView(record, await this.usage.byTeam());
  }

  @Get()
  async list(): Promise<unknown> {
    const [cohorts, usage] = await Promise.all([this.cohorts.list(), this.usage.byTeam()]);
    return { items: cohorts.map((c) => cohortView(c, usage)) };
  }

  @Get(':name')
  async get(@Param('name', NamePipe) name: string): Promise<unknown> {
    const [cohort, usage] = await Promise.all([this.cohorts.get(name), this.usage.byTeam()]);
    if (!cohort) throw notFound(`cohort ${name}`);
    return cohortView(cohort, usage);
  }

  /** 204, or 409 naming the member teams (move them out with PATCH /v1/teams/{name} { "cohort": null } first). */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  async delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
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
