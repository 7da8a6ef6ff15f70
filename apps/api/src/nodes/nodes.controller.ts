import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { NodeNamePipe } from '../validation/name.pipe.js';
import { DrainNodeDto, PutNodeDto } from './node.dto.js';
import { NodeDrainView, NodeListView, NodeView } from './node.view.js';
import { NodesService } from './nodes.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('capacity')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/nodes')
export class NodesController {
  constructor(@Inject(NodesService) private readonly nodes: NodesService) {}

  @Put(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Register or replace a node (clusters without Kubernetes sync)',
    description:
      'Admin only; for clusters without Kubernetes sync, and tests. In Kubernetes mode (KUBECONFIG set) the API server is the truth for nodes: ' +
      '409, whether the node is synced already or not (a node written here would be overwritten by the sync, or receive pods no kubelet runs). ' +
      '409 too when the change leaves it less than its jobs hold (cordon it with `schedulable: false` and let them finish first); 422 for an unknown flavor. 201 when created, 200 when replaced.',
  })
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
  @ApiOperation({
    summary: 'List nodes',
    description:
      'Every node with its flavor, capacity, topology, labels, whether it is schedulable, where it comes from (`source`: api or kubernetes) and what ' +
      "other schedulers' pods hold on it. Admins and members.",
  })
  @Answers(NodeListView)
  async list(): Promise<NodeListView> {
    return { items: await this.nodes.list() };
  }

  @Get(':name')
  @ApiOperation({
    summary: 'Get a node',
    description:
      "The node's flavor, capacity, topology, labels, schedulability, source and what other schedulers' pods hold on it. Admins and members; 404 for an unknown node.",
  })
  @Answers(NodeView)
  get(@Param('name', NodeNamePipe) name: string): Promise<NodeView> {
    return this.nodes.get(name);
  }

  @Post(':name/drain')
  @AdminOnly()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Drain a node: cordon it and requeue its jobs',
    description:
      'Admin only, for nodes registered here (in Kubernetes mode a synced node is drained with kubectl drain: 409). Cordons the node (`schedulable: false`, ' +
      'audited as node.updated) and requeues every job holding accelerators on it, as a preemption does: through PREEMPTED, evicted with its checkpoint grace ' +
      'period, the work after its last checkpoint counted as wasted; the scheduler places them elsewhere. Each job gets a job.requeued event naming the node. ' +
      '`dryRun: true` answers which jobs would be requeued, changing nothing. 404 for an unknown node.',
  })
  @Answers(NodeDrainView)
  drain(@Param('name', NodeNamePipe) name: string, @Body() dto: DrainNodeDto, @Caller() caller: Principal): Promise<NodeDrainView> {
    return this.nodes.drain(name, dto ?? {}, caller);
  }

  @Delete(':name')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete a node that holds no work',
    description:
      'Admin only. 204, or 409 naming the jobs that hold accelerators on it (cordon it with `schedulable: false` and let them finish, or cancel them). ' +
      'In Kubernetes mode a synced node goes with its Node object (kubectl drain, then delete): 409. 404 for an unknown node.',
  })
  @HttpCode(204)
  delete(@Param('name', NodeNamePipe) name: string, @Caller() caller: Principal): Promise<void> {
    return this.nodes.delete(name, caller);
  }
}
