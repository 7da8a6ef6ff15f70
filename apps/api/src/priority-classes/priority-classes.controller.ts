import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutPriorityClassDto } from './priority-class.dto.js';
import { PriorityClassListView, PriorityClassView } from './priority-class.view.js';
import { PriorityClassesService } from './priority-classes.service.js';

@ApiTags('tenancy')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/priority-classes')
export class PriorityClassesController {
  constructor(@Inject(PriorityClassesService) private readonly classes: PriorityClassesService) {}

  @Put(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Create or replace a priority class',
    description:
      'Admin only. A named priority members choose when they submit (`priorityClass`), up to their team\'s `maxPriorityClass`; ' +
      'members never send a number. `default: true` makes it the class of jobs that name none, taking that from the class that had it. ' +
      'Changing a value changes what later submissions get, not the jobs already submitted. 201 when created, 200 when replaced.',
  })
  @Answers(PriorityClassView, 200, 201)
  async put(
    @Param('name', NamePipe) name: string,
    @Body() dto: PutPriorityClassDto,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ): Promise<PriorityClassView> {
    const { created, priorityClass } = await this.classes.put(name, dto, caller);
    void reply.status(created ? 201 : 200);
    return priorityClass;
  }

  @Get()
  @ApiOperation({ summary: 'List priority classes', description: 'Every class, highest value first, with the default marked. Every token may read them.' })
  @Answers(PriorityClassListView)
  async list(): Promise<PriorityClassListView> {
    return { items: await this.classes.list() };
  }

  @Get(':name')
  @ApiOperation({ summary: 'Get a priority class', description: 'One class. Every token may read it; 404 for an unknown class.' })
  @Answers(PriorityClassView)
  get(@Param('name', NamePipe) name: string): Promise<PriorityClassView> {
    return this.classes.get(name);
  }

  @Delete(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete a priority class',
    description: "Admin only. 204, or 409 naming the teams whose highest class it is. Jobs keep the priority it gave them. 404 for an unknown class.",
  })
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.classes.delete(name, caller);
  }
}
