import { Inject, Injectable } from '@nestjs/common';
import { AppError, Config, notFound, unknownReference } from '#common';
import { FlavorRepository, MissingReferenceError, NodeDrainRepository, NodeOverAllocatedError, NodeRepository } from '#db';
import type { Principal } from '../auth/principal.js';
import type { DrainNodeDto, PutNodeDto } from './node.dto.js';
import { nodeView, type NodeDrainView, type NodeView } from './node.view.js';

/**
 * Nodes written through the API (clusters without Kubernetes sync, and tests). In Kubernetes mode
 * (KUBECONFIG set) the API server is the truth for nodes: writes answer 409 pointing at kubectl.
 */
@Injectable()
export class NodesService {
  constructor(
    @Inject(NodeRepository) private readonly nodes: NodeRepository,
    @Inject(NodeDrainRepository) private readonly drains: NodeDrainRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
    @Inject(Config) private readonly config: Config,
  ) {}

  async put(name: string, dto: PutNodeDto, caller: Principal): Promise<{ created: boolean; node: NodeView }> {
    if (this.config.kubeconfig !== null) throw await this.managedByKubernetes(name);
    if ((await this.flavors.missing([dto.flavor])).length > 0) throw unknownReference('flavor', `unknown flavor: ${dto.flavor}`);
    const { record, created } = await this.nodes
      .upsert(name, {
        flavor: dto.flavor,
        accelerators: dto.accelerators,
        cpuMillis: dto.cpuMillis,
        memoryMiB: dto.memoryMiB,
        topology: { ...dto.topology },
        labels: { ...(dto.labels ?? {}) },
        schedulable: dto.schedulable ?? true,
      }, caller.subject)
      .catch((error: unknown) => {
        // The flavor was deleted between the check and the write.
        if (error instanceof MissingReferenceError) throw unknownReference('flavor', `unknown flavor: ${dto.flavor}`);
        if (error instanceof NodeOverAllocatedError) {
          const shown = error.jobs.slice(0, 5).map((j) => `${j.team}/${j.name} (${j.id})`);
          throw new AppError(
            'IN_USE',
            `node ${name} holds more than this change leaves it (${error.shortfalls.join('; ')}) for ${error.jobs.length} job(s): ` +
              `${shown.join(', ')}${error.jobs.length > shown.length ? ', …' : ''}; cordon it with {"schedulable": false, …} and let them finish, or cancel them, then shrink it`,
          );
        }
        throw error;
      });
    return { created, node: nodeView(record) };
  }

  /** Cordons the node and requeues every job holding accelerators on it (NodeDrainRepository). */
  async drain(name: string, dto: DrainNodeDto, caller: Principal): Promise<NodeDrainView> {
    const dryRun = dto.dryRun === true;
    const r = await this.drains.drain(name, caller.subject, dryRun);
    if (r.outcome === 'missing') throw notFound(`node ${name}`);
    if (r.outcome === 'kubernetes') {
      throw new AppError(
        'CONFLICT',
        `node ${name} is synced from its Kubernetes Node object, which is the truth for it in Kubernetes mode: drain it there (kubectl drain ${name}); ` +
          'Quartermaster requeues the gangs whose pods are evicted',
      );
    }
    return { node: name, cordoned: r.cordoned, jobs: r.jobs, dryRun };
  }

  async list(): Promise<NodeView[]> {
    return (await this.nodes.list()).map(nodeView);
  }

  async get(name: string): Promise<NodeView> {
    const node = await this.nodes.get(name);
    if (!node) throw notFound(`node ${name}`);
    return nodeView(node);
  }

  /**
   * 409 IN_USE naming the jobs that hold accelerators on it (cordon it with `schedulable: false` and let
   * them finish, or cancel them). In Kubernetes mode a synced node is deleted with its Node object: 409.
   */
  async delete(name: string, caller: Principal): Promise<void> {
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
}
