import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeCluster, ResourceWatch } from '#kube';

/** Where the importers read the cluster's unbound pods from each pass. */
export type UnboundPodSource = () => Promise<readonly V1Pod[]>;

/**
 * One watch of every unbound pod in the cluster (field selector `spec.nodeName=`, all namespaces), shared by the
 * GangImporter and the WorkloadImporter. Each of them listed these pods from the API server every pass
 * (QM_KUBE_IMPORT_EVERY_MS): on 2 cores, 400 pending pods read and deserialized twice every 300 ms kept the
 * process busy while the gangs waited for their passes. A watch carries only the changes; a pod that is bound
 * leaves the selector (the API server sends its deletion). Restarted after failures by KubeCluster.watch.
 */
export class UnboundPods {
  private watch: ResourceWatch<V1Pod> | null = null;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.watch = await this.cluster.watchPods(
      { onError: (error) => this.logger.warn({ err: error }, 'unbound pod watch failed; restarting') },
      { allNamespaces: true, fieldSelector: 'spec.nodeName=' },
    );
  }

  /** The source the importers read: the watch's cache (bound ones filtered out, in case an update is in flight). */
  source(): UnboundPodSource {
    return () => Promise.resolve((this.watch?.list() ?? []).filter((pod) => !pod.spec?.nodeName));
  }

  async stop(): Promise<void> {
    await this.watch?.stop();
    this.watch = null;
  }
}

/** Without a shared watch (tests, one-off passes): a list from the API server. */
export function listedUnboundPods(cluster: KubeCluster): UnboundPodSource {
  return () => cluster.listPods({ allNamespaces: true, fieldSelector: 'spec.nodeName=' });
}
