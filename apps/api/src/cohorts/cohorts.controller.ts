import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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

  @Put(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Create or replace a cohort',
    description:
      "Admin only. A cohort is a borrowing pool: its member teams may use each other's idle nominal quota. PUT sets its description " +
      '(absent: empty); teams join it with PUT or PATCH /v1/teams/{name}. 201 when created, 200 when replaced.',
  })
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
  @ApiOperation({
    summary: 'List cohorts with their members and usage',
    description: 'Every cohort with its member teams and, per flavor, their nominal quota and live usage summed. Admins and members.',
  })
  @Answers(CohortListView)
  async list(): Promise<CohortListView> {
    return { items: await this.cohorts.list() };
  }

  @Get(':name')
  @ApiOperation({
    summary: 'Get a cohort with its members and usage',
    description: "The cohort's member teams and, per flavor, their nominal quota and live usage summed. Admins and members; 404 for an unknown cohort.",
  })
  @Answers(CohortView)
  get(@Param('name', NamePipe) name: string): Promise<CohortView> {
    return this.cohorts.get(name);
  }

  @Delete(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete a cohort without members',
    description:
      'Admin only. 204, or 409 naming the member teams while it has any (move them out first with PATCH /v1/teams/{name} `{ "cohort": null }`). ' +
      '404 for an unknown cohort.',
  })
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.cohorts.delete(name, caller);
  }
}
