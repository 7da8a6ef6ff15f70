import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutCohortDto } from './cohort.dto.js';
import { CohortListView, CohortView } from './cohort.view.js';
import { CohortsService } from './cohorts.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('tenancy')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/cohorts')
export class CohortsController {
  constructor(@Inject(CohortsService) private readonly cohorts: CohortsService) {}

  /** 201 when created, 200 when replaced. */
  @Put(':name')
  @AdminOnly()
  @Answers(CohortView, 200, 201)
  async put(
    @Param('name', NamePipe) name: string,
    @Body() dto: PutCohortDto,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ): Promise<CohortView> {
    const { created, cohort } = await this.cohorts.put(name, dto.description ?? '', caller);
    void reply.status(created ? 201 : 200);
    return cohort;
  }

  @Get()
  @Answers(CohortListView)
  async list(): Promise<CohortListView> {
    return { items: await this.cohorts.list() };
  }

  @Get(':name')
  @Answers(CohortView)
  get(@Param('name', NamePipe) name: string): Promise<CohortView> {
    return this.cohorts.get(name);
  }

  /** 204, or 409 naming the member teams (move them out with PATCH /v1/teams/{name} { "cohort": null } first). */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.cohorts.delete(name, caller);
  }
}
