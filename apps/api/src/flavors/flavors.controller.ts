import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NamePipe } from '../validation/name.pipe.js';
import { PutFlavorDto } from './flavor.dto.js';
import { FlavorListView, FlavorView } from './flavor.view.js';
import { FlavorsService } from './flavors.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('capacity')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/flavors')
export class FlavorsController {
  constructor(@Inject(FlavorsService) private readonly flavors: FlavorsService) {}

  @Put(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Create or replace an accelerator flavor',
    description:
      'Admin only. A flavor is a kind of accelerator (its extended resource, node labels, topology label keys, relative speed and hourly cost). ' +
      'PUT replaces the whole flavor: absent fields take their defaults (resourceName and topology labels by kind, relativeSpeed 1, costPerHour 0); ' +
      'a new costPerHour starts a new entry of its price history. 201 when created, 200 when replaced.',
  })
  @Answers(FlavorView, 200, 201)
  async put(
    @Param('name', NamePipe) name: string,
    @Body() dto: PutFlavorDto,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ): Promise<FlavorView> {
    const { created, flavor } = await this.flavors.put(name, dto, caller);
    void reply.status(created ? 201 : 200);
    return flavor;
  }

  @Get()
  @ApiOperation({ summary: 'List accelerator flavors', description: 'Every flavor with its resource name, labels, speed and price. Admins and members.' })
  @Answers(FlavorListView)
  async list(): Promise<FlavorListView> {
    return { items: await this.flavors.list() };
  }

  @Get(':name')
  @ApiOperation({ summary: 'Get an accelerator flavor', description: 'The flavor with its resource name, labels, speed and price. Admins and members; 404 for an unknown flavor.' })
  @Answers(FlavorView)
  get(@Param('name', NamePipe) name: string): Promise<FlavorView> {
    return this.flavors.get(name);
  }

  @Delete(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete an unused accelerator flavor',
    description:
      'Admin only. 204, or 409 (FLAVOR_IN_USE, with how many) while nodes, quotas or unfinished jobs refer to it; its price history is kept. ' +
      '404 for an unknown flavor.',
  })
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.flavors.delete(name, caller);
  }
}
