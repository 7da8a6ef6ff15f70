import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
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

  /** 201 when created, 200 when replaced. */
  @Put(':name')
  @AdminOnly()
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
  @Answers(FlavorListView)
  async list(): Promise<FlavorListView> {
    return { items: await this.flavors.list() };
  }

  @Get(':name')
  @Answers(FlavorView)
  get(@Param('name', NamePipe) name: string): Promise<FlavorView> {
    return this.flavors.get(name);
  }

  /** 409 while nodes, quotas or unfinished jobs refer to it. */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param('name', NamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.flavors.delete(name, caller);
  }
}
