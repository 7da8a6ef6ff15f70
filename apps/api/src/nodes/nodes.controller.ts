import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NodeNamePipe } from '../validation/name.pipe.js';
import { PutNodeDto } from './node.dto.js';
import { NodeListView, NodeView } from './node.view.js';
import { NodesService } from './nodes.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('capacity')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/nodes')
export class NodesController {
  constructor(@Inject(NodesService) private readonly nodes: NodesService) {}

  /**
   * For clusters without Kubernetes sync, and tests. In Kubernetes mode (KUBECONFIG set) the API server is
   * the truth for nodes: 409, whether the node is synced already or not (a node written here would be
   * overwritten by the sync, or receive pods no kubelet runs). 201 when created, 200 when replaced.
   */
  @Put(':name')
  @AdminOnly()
  @Answers(NodeView, 200, 201)
  async put(
    @Param('name', NodeNamePipe) name: string,
    @Body() dto: PutNodeDto,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ): Promise<NodeView> {
    const { created, node } = await this.nodes.put(name, dto, caller);
    void reply.status(created ? 201 : 200);
    return node;
  }

  @Get()
  @Answers(NodeListView)
  async list(): Promise<NodeListView> {
    return { items: await this.nodes.list() };
  }

  @Get(':name')
  @Answers(NodeView)
  get(@Param('name', NodeNamePipe) name: string): Promise<NodeView> {
    return this.nodes.get(name);
  }

  /**
   * 204, or 409 naming the jobs that hold accelerators on it (cordon it with `schedulable: false` and let
   * them finish, or cancel them). In Kubernetes mode a synced node is deleted with its Node object: 409.
   */
  @Delete(':name')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param('name', NodeNamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.nodes.delete(name, caller);
  }
}
