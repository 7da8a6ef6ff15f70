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
  private readonly listeners = new Set<(pod: V1Pod) => void>();

  constructor(
    private readonly cluster: KubeCluster,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.watch = await this.cluster.watchPods(
      {
        onAdd: (pod) => {
          if (mayBeOurs(pod, this.cluster.schedulerName)) for (const listener of this.listeners) listener(pod);
        },
        onError: (error) => this.logger.warn({ err: error }, 'unbound pod watch failed; restarting'),
      },
      { allNamespaces: true, fieldSelector: 'spec.nodeName=' },
    );
  }

  /** Calls `listener` when an unbound pod that may be Quartermaster's appears (the importers run a pass soon). */
  onAdded(listener: (pod: V1Pod) => void): void {
    this.listeners.add(listener);
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

/**
 * Whether a new unbound pod may be one an importer takes: it names our scheduler, or asks for an extended
 * resource (an accelerator; under kube-scheduler with the extender, workload pods keep the default scheduler).
 * Other pods — most of a cluster's churn — do not start a pass.
 */
export function mayBeOurs(pod: V1Pod, schedulerName: string): boolean {
  if (pod.spec?.nodeName) return false;
  if (pod.spec?.schedulerName === schedulerName) return true;
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const name of Object.keys({ ...c.resources?.limits, ...c.resources?.requests })) if (name.includes('/')) return true;
  }
  return false;
}
