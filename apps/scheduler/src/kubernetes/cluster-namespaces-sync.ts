import type { V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { POD_SECURITY_ENFORCE_LABEL, ownNamespaceConflicts } from '#core';
import { KubeJobsRepository, KubeNamespacesRepository, type Database, type KubeNamespaceRow } from '#db';
import type { KubeCluster, ResourceWatch } from '#kube';
import type { KubernetesSettings } from './kubernetes-settings.js';

/** Quartermaster's own namespace (its ServiceAccount, its Secrets) is a jobs namespace: the scheduler does not start. */
export class OwnNamespaceError extends Error {}

/**
 * The start-up check of Kubernetes mode: Quartermaster's own namespace is neither QM_KUBE_NAMESPACE nor any team's.
 * A member whose pods ran there could mount its Secrets or run as its ServiceAccount. Unknown own namespace (not
 * in a cluster, QM_KUBE_OWN_NAMESPACE unset): nothing to check, said once.
 */
export async function assertOwnNamespaceIsNoJobsNamespace(database: Database, settings: KubernetesSettings, logger: Logger): Promise<void> {
  if (settings.ownNamespace === null) {
    logger.warn('Quartermaster\'s own namespace is unknown (set QM_KUBE_OWN_NAMESPACE): it is not checked against the jobs\' namespaces');
    return;
  }
  const conflicts = ownNamespaceConflicts(settings.ownNamespace, settings.namespace, await new KubeJobsRepository(database).teamNamespaces());
  if (conflicts.length === 0) return;
  throw new OwnNamespaceError(
    `refusing to start: Quartermaster's own namespace ${settings.ownNamespace} (its ServiceAccount and Secrets) is a jobs namespace — ${conflicts.join('; ')}. ` +
      'Give those teams other namespaces (qm team set TEAM --namespaces …) and QM_KUBE_NAMESPACE another value, or install Quartermaster in a namespace of its own.',
  );
}

function rowOf(namespace: V1Namespace): KubeNamespaceRow | null {
  const name = namespace.metadata?.name;
  return name ? { name, podSecurity: namespace.metadata?.labels?.[POD_SECURITY_ENFORCE_LABEL] ?? null } : null;
}

/**
 * Tells the API what it checks submissions against (KubeNamespacesRepository): Quartermaster's own namespace,
 * whether missing team namespaces are created, and the cluster's namespaces, kept by a watch. Idempotent writes:
 * every scheduler replica may run one.
 */
export class ClusterNamespacesSync {
  private watch: ResourceWatch<V1Namespace> | null = null;
  private readonly repository: KubeNamespacesRepository;

  constructor(
    private readonly cluster: KubeCluster,
    database: Database,
    private readonly settings: KubernetesSettings,
    private readonly logger: Logger,
  ) {
    this.repository = new KubeNamespacesRepository(database);
  }

  async start(): Promise<void> {
    await this.repository.publish({ ownNamespace: this.settings.ownNamespace, createNamespaces: this.settings.createNamespaces });
    const write = (what: string, change: () => Promise<void>): void => {
      change().catch((error: unknown) => this.logger.warn({ err: error }, `namespaces: could not record ${what}; the next change or restart does`));
    };
    this.watch = await this.cluster.watchNamespaces({
      onAdd: (ns) => {
        const row = rowOf(ns);
        if (row) write(row.name, () => this.repository.upsert(row));
      },
      onUpdate: (ns) => {
        const row = rowOf(ns);
        if (row) write(row.name, () => this.repository.upsert(row));
      },
      onDelete: (ns) => {
        const name = ns.metadata?.name;
        if (name) write(name, () => this.repository.remove(name));
      },
      onError: (error) => this.logger.warn({ err: error }, 'namespaces: watch failed; restarting'),
    });
    await this.repository.replaceAll(this.watch.list().map(rowOf).filter((r): r is KubeNamespaceRow => r !== null));
  }

  async stop(): Promise<void> {
    await this.watch?.stop();
    this.watch = null;
  }
}
