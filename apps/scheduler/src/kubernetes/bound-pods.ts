import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeCluster, ResourceWatch } from '#kube';

/** The selection of KubeCluster.podsOnNode, for every node: bound, non-terminal pods of every namespace. */
const BOUND = 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed';

/** Pod uids remembered as seen after their pod left the selection (a short-lived pod still proves the view's progress). */
const SEEN_KEPT = 20_000;

/**
 * The bind handler's view of the pods on each node (bind-checks checkNodes), from one watch of every bound,
 * non-terminal pod — where each bind listed the pods of its nodes from the API server (a LIST per bind).
 *
 * Why this keeps DESIGN rule 1 (see apps/scheduler/src/kubernetes/README.md, "The bind re-check"): a watch
 * delivers the events of its selection in the order etcd committed them. Once the watch has delivered a pod
 * this process created bound (its uid), the view holds every pod bound to any node before it — a read as
 * fresh as a LIST made right after that create. The bind checks before creating (from this view, which may
 * lag by the watch's latency) and again after (`seen`: once its own pods are in the view): a pod another
 * scheduler bound before ours that the first check missed is found by the second, and the gang is requeued
 * and its pods deleted. The LIST it replaces was made before the create, so a pod bound between that LIST
 * and the create went unnoticed; now none bound before ours does.
 */
export class BoundPods {
  private watch: ResourceWatch<V1Pod> | null = null;
  private starting: Promise<boolean> | null = null;
  private closed = false;
  /** Pods by node, then by uid. */
  private readonly byNode = new Map<string, Map<string, V1Pod>>();
  /** The node each pod in the view is on, by uid. */
  private readonly nodeOf = new Map<string, string>();
  /** Uids the watch has delivered (insertion order; the oldest are forgotten past SEEN_KEPT). */
  private readonly seenUids = new Set<string>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly cluster: KubeCluster,
    private readonly logger: Logger,
  ) {}

  /** Starts the watch on first use; false when it cannot start (the caller lists from the API server instead). */
  ready(): Promise<boolean> {
    if (this.watch) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  /** The bound, non-terminal pods on the node, as the watch last delivered them. */
  onNode(node: string): V1Pod[] {
    return [...(this.byNode.get(node)?.values() ?? [])];
  }

  /**
   * Resolves true once the watch has delivered every pod of `uids` (so the view holds every pod bound before
   * each of them), false if that has not happened within `timeoutMs` or the view is closed.
   */
  async seen(uids: readonly string[], timeoutMs: number): Promise<boolean> {
    const all = (): boolean => uids.every((uid) => this.seenUids.has(uid));
    if (all()) return true;
    if (this.closed || !this.watch) return false;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      timer.unref();
      const check = (): void => {
        if (this.closed) finish(false);
        else if (all()) finish(true);
      };
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.starting;
    await this.watch?.stop();
    this.watch = null;
    for (const waiter of [...this.waiters]) waiter();
  }

  private async start(): Promise<boolean> {
    try {
      const watch = await this.cluster.watchPods(
        {
          onAdd: (pod) => this.put(pod),
          onUpdate: (pod) => this.put(pod),
          onDelete: (pod) => this.remove(pod),
          onError: (error) => this.logger.warn({ err: error }, 'bound pod watch (bind checks) failed; restarting'),
        },
        { allNamespaces: true, fieldSelector: BOUND },
      );
      if (this.closed) {
        await watch.stop();
        return false;
      }
      this.watch = watch;
      return true;
    } catch (error) {
      this.logger.warn({ err: error }, 'bound pod watch (bind checks) cannot start; binds list the pods of their nodes');
      return false;
    }
  }

  private put(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const node = pod.spec?.nodeName;
    if (!uid || !node) return;
    const was = this.nodeOf.get(uid);
    if (was !== undefined && was !== node) this.byNode.get(was)?.delete(uid);
    this.nodeOf.set(uid, node);
    let pods = this.byNode.get(node);
    if (!pods) this.byNode.set(node, (pods = new Map<string, V1Pod>()));
    pods.set(uid, pod);
    this.markSeen(uid);
  }

  private remove(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const node = this.nodeOf.get(uid);
    this.nodeOf.delete(uid);
    if (node !== undefined) {
      const pods = this.byNode.get(node);
      pods?.delete(uid);
      if (pods?.size === 0) this.byNode.delete(node);
    }
    this.markSeen(uid);
  }

  private markSeen(uid: string): void {
    if (!this.seenUids.has(uid)) {
      this.seenUids.add(uid);
      if (this.seenUids.size > SEEN_KEPT) this.seenUids.delete(this.seenUids.values().next().value!);
    }
    for (const waiter of [...this.waiters]) waiter();
  }
}
