import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppError, notFound } from '#common';
import { topologyLabelsOf } from '#core';
import { FlavorRepository, type FlavorRecord } from '#db';
import { AdminOnly } from '../auth/auth.decorators.js';
import { NamePipe } from '../validation/name.pipe.js';
import { DEFAULT_RESOURCE_NAME, PutFlavorDto } from './flavor.dto.js';
import { ApiProblems } from '../problem.doc.js';

export const flavorView = (f: FlavorRecord): unknown => ({
  name: f.name,
  kind: f.kind,
  resourceName: f.resourceName,
  nodeLabels: f.nodeLabels,
  topologyLabels: topologyLabelsOf(f.kind, f.topologyLabels),
  memoryGiB: f.memoryGiB,
  relativeSpeed: f.relativeSpeed,
  costPerHour: f.costPerHour,
  createdAt: f.createdAt.toISOString(),
  updatedAt: f.updatedAt.toISOString(),
});

@ApiTags('capacity')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/flavors')
export class FlavorsController {
  constructor(@Inject(FlavorRepository) private readonly flavors: FlavorRepository) {}

  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NamePipe) name: string, @Body() dto: PutFlavorDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const { record, created } = await this.flavors.upsert(name, {
      kind: dto.kind,
      resourceName: dto.resourceName ?? DEFAULT_RESOURCE_NAME[dto.kind],
      nodeLabels: dto.nodeLabels ?? {},
      topologyLabels: { ...(dto.topologyLabels ?? {}) },
      memoryGiB: dto.memoryGiB ?? null,
      relativeSpeed: dto.relativeSpeed ?? 1,
      costPerHour: dto.costPerHour ?? 0,
    });
    void reply.status(created ? 201 : 200);
    return flavorView(record);
  }

  @Get()
  async list(): Promise<unknown> {
    return { items: (await this.flavors.list()).map(flavorView) };
  }

  @Get(':name')
  async get(@Param('name', NamePipe) name: string): Promise<unknown> {
    const flavor = await this.flavors.get(name);
    if (!flavor) throw notFound(`flavor ${name}`);
    return flavorView(flavor);
  }

  /** 409 while nodes, quotas or unfinished jobs refer to it. */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  async delete(@Param('name', NamePipe) name: string): Promise<void> {
    const outcome = await this.flavors.deleteIfUnused(name);
    if (outcome === 'missing') throw notFound(`flavor ${name}`);
    if (outcome === 'in-use') {
      const use = await this.flavors.use(name);
      throw new AppError(
        'FLAVOR_IN_USE',
        `flavor ${name} is in use by ${use.nodes} node(s), ${use.quotas} quota(s) and ${use.activeJobs} unfinished job(s); remove those first`,
      );
    }
  }
}
