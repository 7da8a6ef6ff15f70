import type { Logger } from 'pino';
import type { ClusterNode } from '#core';
import { jobsOnDepartedNodes, removeMissingKubeNodes, upsertKubeNodes, type DbHandle, type JobOnDepartedNode } from '#db';
import { ClusterNodeSync, type KubeCluster, type KubeFlavor } from '#kube';

/** What Quartermaster's own pods hold on a node, as a resource of a flavor (an index built once per write). */
export type HeldByOwnPods = (node: string, resourceName: string) => { accelerators: number; cpuMillis: number; memoryMiB: number };

/**
 * Writes the cluster's accelerator nodes (ClusterNodeSync: Node objects plus the capacity other
 * schedulers' pods hold) into Postgres as `nodes` rows with source `kubernetes`, and asks for a cycle
 * whenever something changed. A node that left the cluster is deleted, or, while allocations still name
 * it, kept as unschedulable with no capacity; the jobs holding it are handed to `releaseDeparted` (requeued)
 * once the API server confirms the Node is gone. Flavors are re-read periodically (a new flavor maps nodes).
 */
export class NodeStoreSync {
  private sync: ClusterNodeSync | null = null;
  private written = new Map<string, string>();
  /** Names of the Nodes at the last flush whose missing-node clean-up succeeded (sorted, joined). */
  private presentKey: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flavorTimer: NodeJS.Timeout | null = null;
  private flavorKey = '';
  private resourceOf = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly db: DbHandle,
    private readonly loadFlavors: () => Promise<KubeFlavor[]>,
    private readonly options: {
      debounceMs: number;
      flavorRefreshMs: number;
      onChanged: () => void;
      /**
       * Usage ClusterNodeSync counts as external but that Quartermaster already holds as allocations: pods
       * of Quartermaster jobs bound by another scheduler (kube-scheduler through the extender). Subtracted.
       */
      heldByOwnPods?: () => HeldByOwnPods | Promise<HeldByOwnPods>;
      /**
       * Jobs holding accelerators on a Node that left the cluster (confirmed by a GET of the Node): nothing
       * else releases them when their pods never come back, e.g. a controller's re-created pod that the
       * extender's filter pins to the departed node. Called again at the next look while they still hold it.
       */
      releaseDeparted?: (jobs: JobOnDepartedNode[]) => Promise<void>;
    },
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const flavors = await this.loadFlavors();
    this.flavorKey = JSON.stringify(flavors);
    this.resourceOf = new Map(flavors.map((f) => [f.name, f.resourceName]));
    this.sync = await ClusterNodeSync.start(this.cluster, flavors, {
      onChange: () => this.schedule(),
      onError: (error) => this.logger.warn({ err: error }, 'node sync watch error'),
    });
    await this.flush();
    this.flavorTimer = setInterval(() => {
      this.chain = this.chain.then(() => this.refreshFlavors());
      // Also look again for rows of departed Nodes (one kept while an allocation named it is deleted now).
      this.presentKey = null;
      this.schedule();
    }, this.options.flavorRefreshMs);
    this.flavorTimer.unref();
  }

  /** Writes now (tests, and after a flavor change through the API). */
  async flushNow(): Promise<void> {
    await this.refreshFlavors();
    this.chain = this.chain.then(() => this.flush());
    await this.chain;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.flavorTimer) clearInterval(this.flavorTimer);
    await this.chain;
    await this.sync?.stop();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.chain = this.chain.then(() => this.flush());
    }, this.options.debounceMs);
  }

  private async refreshFlavors(): Promise<void> {
    try {
      const flavors = await this.loadFlavors();
      const key = JSON.stringify(flavors);
      if (key !== this.flavorKey) {
        this.flavorKey = key;
        this.resourceOf = new Map(flavors.map((f) => [f.name, f.resourceName]));
        this.sync?.setFlavors(flavors);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'node sync: cannot read flavors');
    }
  }

  private async flush(): Promise<void> {
    if (!this.sync) return;
    try {
      const held = await this.options.heldByOwnPods?.();
      const nodes = this.sync.nodes().map((n) => (held ? this.withoutOwnPods(n, held) : n));
      const changed = nodes.filter((n) => this.written.get(n.name) !== JSON.stringify(n));
      const present = new Set(nodes.map((n) => n.name));
      const gone = [...this.written.keys()].filter((name) => !present.has(name));
      if (changed.length > 0) await this.upsert(changed);
      // Rows of Nodes that left: looked for when the set of Nodes changed (most flushes follow pod events).
      const presentKey = nodes.map((n) => n.name).join('\n');
      const look = presentKey !== this.presentKey;
      const removed = look ? await this.removeMissing(nodes.map((n) => n.name)) : 0;
      const released = look ? await this.releaseDeparted(nodes.map((n) => n.name)) : 0;
      this.presentKey = presentKey;
      for (const n of changed) this.written.set(n.name, JSON.stringify(n));
      for (const name of gone) this.written.delete(name);
      if (changed.length > 0 || removed > 0 || released > 0) {
        this.logger.debug({ changed: changed.length, removed, released }, 'node sync: nodes written');
        this.options.onChanged();
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'node sync: cannot write nodes, retrying');
      this.written.clear();
      this.presentKey = null;
      if (!this.stopped) setTimeout(() => this.schedule(), 1000).unref();
    }
  }

  private withoutOwnPods(node: ClusterNode, heldByOwnPods: HeldByOwnPods): ClusterNode {
    if (!node.external) return node;
    const held = heldByOwnPods(node.name, this.resourceOf.get(node.flavor) ?? '');
    if (held.accelerators === 0 && held.cpuMillis === 0 && held.memoryMiB === 0) return node;
    return {
      ...node,
      external: {
        accelerators: Math.max(0, node.external.accelerators - held.accelerators),
        cpuMillis: Math.max(0, node.external.cpuMillis - held.cpuMillis),
        memoryMiB: Math.max(0, node.external.memoryMiB - held.memoryMiB),
      },
    };
  }

  private async upsert(nodes: ClusterNode[]): Promise<void> {
    await upsertKubeNodes(this.db, nodes);
  }

  /** Kubernetes-sourced rows whose Node is gone: deleted, or made unschedulable while allocations name them. */
  private removeMissing(present: string[]): Promise<number> {
    return removeMissingKubeNodes(this.db, present);
  }

  /**
   * The jobs holding a node that is not among the present ones, handed to `releaseDeparted` when the API
   * server says the Node is gone (the watch's view can lag behind or restart; a Node that no longer maps to a
   * flavor still exists, and the pods on it still run). Returns how many were handed over.
   */
  private async releaseDeparted(present: string[]): Promise<number> {
    const release = this.options.releaseDeparted;
    if (!release) return 0;
    const holding = await jobsOnDepartedNodes(this.db, present);
    if (holding.length === 0) return 0;
    const gone = new Set<string>();
    for (const node of new Set(holding.flatMap((j) => j.nodes))) if ((await this.cluster.getNode(node)) === null) gone.add(node);
    const lost = holding.map((j) => ({ ...j, nodes: j.nodes.filter((n) => gone.has(n)) })).filter((j) => j.nodes.length > 0);
    if (lost.length > 0) await release(lost);
    return lost.length;
  }
}
