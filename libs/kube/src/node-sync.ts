import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterNode } from '#core';
import type { KubeApiError } from './errors.js';
import type { KubeCluster, ResourceWatch } from './kube-cluster.js';
import { nodeFromKube, type KubeFlavor } from './node-mapping.js';

export interface ClusterNodeSyncOptions {
  /** Called (synchronously, possibly often) after any change that may alter the nodes; debounce in the caller. */
  onChange?: () => void;
  onError?: (error: KubeApiError) => void;
}

/**
 * Live view of the cluster's accelerator nodes as the scheduling core sees them: watches Nodes and the
 * pods bound to nodes (all namespaces, non-terminal), and maps them with nodeFromKube, so capacity held
 * by other schedulers' pods shows up as `external` as soon as those pods are bound and goes away when
 * they end. Start with `ClusterNodeSync.start`, read with `nodes()`, end with `stop()`.
 */
export class ClusterNodeSync {
  private nodeWatch: ResourceWatch<V1Node> | null = null;
  private podWatch: ResourceWatch<V1Pod> | null = null;

  private constructor(
    private readonly cluster: KubeCluster,
    private flavors: readonly KubeFlavor[],
    private readonly options: ClusterNodeSyncOptions,
  ) {}

  static async start(cluster: KubeCluster, flavors: readonly KubeFlavor[], options: ClusterNodeSyncOptions = {}): Promise<ClusterNodeSync> {
    const sync = new ClusterNodeSync(cluster, flavors, options);
    const changed = (): void => options.onChange?.();
    const handlers = { onAdd: changed, onUpdate: changed, onDelete: changed, onError: options.onError };
    sync.podWatch = await cluster.watchPods(handlers, {
      allNamespaces: true,
      // Terminal pods leave the selection: the watch reports them deleted, which frees their capacity.
      fieldSelector: 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed',
    });
    try {
      sync.nodeWatch = await cluster.watchNodes(handlers);
    } catch (error) {
      await sync.podWatch.stop();
      throw error;
    }
    return sync;
  }

  /** Flavors changed (PUT /v1/flavors): nodes are re-mapped on the next read. */
  setFlavors(flavors: readonly KubeFlavor[]): void {
    this.flavors = flavors;
    this.options.onChange?.();
  }

  /** Accelerator nodes of a known flavor, sorted by name. */
  nodes(): ClusterNode[] {
    if (!this.nodeWatch || !this.podWatch) throw new Error('ClusterNodeSync is stopped');
    const podsByNode = new Map<string, V1Pod[]>();
    for (const pod of this.podWatch.list()) {
      const node = pod.spec?.nodeName;
      if (!node) continue;
      const list = podsByNode.get(node);
      if (list) list.push(pod);
      else podsByNode.set(node, [pod]);
    }
    const mapping = { schedulerName: this.cluster.schedulerName };
    const nodes: ClusterNode[] = [];
    for (const node of this.nodeWatch.list()) {
      const mapped = nodeFromKube(node, this.flavors, podsByNode.get(node.metadata?.name ?? '') ?? [], mapping);
      if (mapped) nodes.push(mapped);
    }
    return nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async stop(): Promise<void> {
    const watches = [this.nodeWatch, this.podWatch];
    this.nodeWatch = null;
    this.podWatch = null;
    await Promise.all(watches.map((watch) => (watch ? watch.stop() : Promise.resolve())));
  }
}
