import { Body, Controller, Get, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound, unknownReference } from '#common';
import { FlavorRepository, NodeRepository, type NodeRecord, pgCode, PG_FOREIGN_KEY_VIOLATION } from '#db';
import { AdminOnly } from '../auth/auth.decorators.js';
import { NodeNamePipe } from '../validation/name.pipe.js';
import { PutNodeDto } from './node.dto.js';
import { ApiProblems } from '../problem.doc.js';

const nodeView = (n: NodeRecord): unknown => ({
  name: n.name,
  flavor: n.flavor,
  accelerators: n.accelerators,
  cpuMillis: n.cpuMillis,
  memoryMiB: n.memoryMiB,
  topology: n.topology,
  schedulable: n.schedulable,
  source: n.source,
  external: n.external,
  createdAt: n.createdAt.toISOString(),
  updatedAt: n.updatedAt.toISOString(),
});

@ApiTags('capacity')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/nodes')
export class NodesController {
  constructor(
    @Inject(NodeRepository) private readonly nodes: NodeRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
  ) {}

  /** For clusters without Kubernetes sync, and tests. */
  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NodeNamePipe) name: string, @Body() dto: PutNodeDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    if ((await this.flavors.missing([dto.flavor])).length > 0) throw unknownReference('flavor', `unknown flavor: ${dto.flavor}`);
    try {
      const { record, created } = await this.nodes.upsert(name, {
        flavor: dto.flavor,
        accelerators: dto.accelerators,
        cpuMillis: dto.cpuMillis,
        memoryMiB: dto.memoryMiB,
        topology: { ...dto.topology },
        schedulable: dto.schedulable ?? true,
      });
      void reply.status(created ? 201 : 200);
      return nodeView(record);
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) throw unknownReference('flavor', `unknown flavor: ${dto.flavor}`);
      throw error;
    }
  }

  @Get()
  async list(): Promise<unknown> {
    return { items: (await this.nodes.list()).map(nodeView) };
  }

  @Get(':name')
  async get(@Param('name', NodeNamePipe) name: string): Promise<unknown> {
    const node = await this.nodes.get(name);
    if (!node) throw notFound(`node ${name}`);
    return nodeView(node);
  }
}
