import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppError, Config, notFound, unknownReference } from '#common';
import { FlavorRepository, NodeRepository, type NodeRecord, pgCode, PG_FOREIGN_KEY_VIOLATION } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
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
    @Inject(Config) private readonly config: Config,
  ) {}

  /**
   * For clusters without Kubernetes sync, and tests. In Kubernetes mode (KUBECONFIG set) the API server is
   * the truth for nodes: 409, whether the node is synced already or not (a node written here would be
   * overwritten by the sync, or receive pods no kubelet runs).
   */
  @Put(':name')
  @AdminOnly()
  async put(@Param('name', NodeNamePipe) name: string, @Body() dto: PutNodeDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    if (this.config.kubeconfig !== null) throw await this.managedByKubernetes(name);
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

  private async managedByKubernetes(name: string): Promise<AppError> {
    const synced = (await this.nodes.get(name))?.source === 'kubernetes';
    return new AppError(
      'CONFLICT',
      synced
        ? `node ${name} is synced from its Kubernetes Node object, which is the truth for it in Kubernetes mode (KUBECONFIG is set): ` +
            `change the Node instead (kubectl cordon/uncordon/drain ${name}; topology and flavor come from its labels, capacity from its allocatable)`
        : `in Kubernetes mode (KUBECONFIG is set) nodes come from Kubernetes Node objects; PUT /v1/nodes/{name} is only for clusters without ` +
            `Kubernetes sync. Node ${name} will appear once a Node of that name with accelerators of a known flavor joins the cluster`,
    );
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

  /**
   * 204, or 409 naming the jobs that hold accelerators on it (cordon it with `schedulable: false` and let
   * them finish, or cancel them). In Kubernetes mode a synced node is deleted with its Node object: 409.
   */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  async delete(@Param('name', NodeNamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    if (this.config.kubeconfig !== null && (await this.nodes.get(name))?.source === 'kubernetes') {
      throw new AppError(
        'CONFLICT',
        `node ${name} is synced from its Kubernetes Node object, which is the truth for it in Kubernetes mode (KUBECONFIG is set): ` +
          `drain and delete the Node instead (kubectl drain ${name}; kubectl delete node ${name}); its row goes once its work is released`,
      );
    }
    const result = await this.nodes.delete(name, caller.subject);
    if (result.outcome === 'missing') throw notFound(`node ${name}`);
    if (result.outcome === 'in-use') {
      const jobs = result.use.jobs;
      const shown = jobs.slice(0, 5).map((j) => `${j.team}/${j.name} (${j.id})`);
      throw new AppError(
        'IN_USE',
        `node ${name} holds accelerators of ${jobs.length} job(s): ${shown.join(', ')}${jobs.length > shown.length ? ', …' : ''}; ` +
          `stop new work with PUT /v1/nodes/${name} {"schedulable": false, …} and let them finish, or cancel them, then delete it`,
      );
    }
  }
}
