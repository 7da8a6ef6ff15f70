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
  /** Bound pods by node name, then by `<namespace>/<name>` — kept up to date from the pod watch. */
  private readonly podsByNode = new Map<string, Map<string, V1Pod>>();
  /** Where each pod was last seen bound (a pod's node never changes, but be safe). */
  private readonly nodeOfPod = new Map<string, string>();
  /** Mapped nodes; a node is re-mapped only after an event that concerns it (or a flavor change). */
  private readonly mapped = new Map<string, ClusterNode | null>();

  private constructor(
    private readonly cluster: KubeCluster,
    private flavors: readonly KubeFlavor[],
    private readonly options: ClusterNodeSyncOptions,
  ) {}

  static async start(cluster: KubeCluster, flavors: readonly KubeFlavor[], options: ClusterNodeSyncOptions = {}): Promise<ClusterNodeSync> {
    const sync = new ClusterNodeSync(cluster, flavors, options);
    const onPod = (pod: V1Pod): void => {
      sync.updatePod(pod, false);
      options.onChange?.();
    };
    const onPodDeleted = (pod: V1Pod): void => {
      sync.updatePod(pod, true);
      options.onChange?.();
    };
    const onNode = (node: V1Node): void => {
      sync.mapped.delete(node.metadata?.name ?? '');
      options.onChange?.();
    };
    sync.podWatch = await cluster.watchPods(
      { onAdd: onPod, onUpdate: onPod, onDelete: onPodDeleted, onError: options.onError },
      {
        allNamespaces: true,
        // Terminal pods leave the selection: the watch reports them deleted, which frees their capacity.
        fieldSelector: 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed',
      },
    );
    try {
      sync.nodeWatch = await cluster.watchNodes({ onAdd: onNode, onUpdate: onNode, onDelete: onNode, onError: options.onError });
    } catch (error) {
      await sync.podWatch.stop();
      throw error;
    }
    return sync;
  }

  /** Flavors changed (PUT /v1/flavors): every node is re-mapped on the next read. */
  setFlavors(flavors: readonly KubeFlavor[]): void {
    this.flavors = flavors;
    this.mapped.clear();
    this.options.onChange?.();
  }

  /** Accelerator nodes of a known flavor, sorted by name. */
  nodes(): ClusterNode[] {
    if (!this.nodeWatch || !this.podWatch) throw new Error('ClusterNodeSync is stopped');
    const mapping = { schedulerName: this.cluster.schedulerName };
    const nodes: ClusterNode[] = [];
    for (const node of this.nodeWatch.list()) {
      const name = node.metadata?.name ?? '';
      let mapped = this.mapped.get(name);
      if (mapped === undefined) {
        mapped = nodeFromKube(node, this.flavors, [...(this.podsByNode.get(name)?.values() ?? [])], mapping);
        this.mapped.set(name, mapped);
      }
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

  private updatePod(pod: V1Pod, deleted: boolean): void {
    const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const previous = this.nodeOfPod.get(key);
    if (previous !== undefined) {
      this.podsByNode.get(previous)?.delete(key);
      this.nodeOfPod.delete(key);
      this.mapped.delete(previous);
    }
    const node = pod.spec?.nodeName;
    if (deleted || !node) return;
    let onNode = this.podsByNode.get(node);
    if (!onNode) {
      onNode = new Map();
      this.podsByNode.set(node, onNode);
    }
    onNode.set(key, pod);
    this.nodeOfPod.set(key, node);
    this.mapped.delete(node);
  }
}
