import { Inject, Injectable } from '@nestjs/common';
import { Config } from '#common';
import { jobsNamespaceRefusal, ownNamespaceRefusal } from '#core';
import { KubeNamespacesRepository, type KubeClusterFacts } from '#db';
import { ReloadedSnapshot } from './reloaded-snapshot.js';

/**
 * What the scheduler in Kubernetes mode published about the cluster (its own namespace, the namespaces that
 * exist, whether it creates a team's missing one), as submissions and team changes read it: kept for
 * QM_TOKEN_CACHE_TTL_MS like the teams' settings, and read again when a namespace is not in it (one created
 * since). No scheduler in Kubernetes mode: nothing to check.
 */
@Injectable()
export class ClusterNamespaces {
  private readonly snapshot: ReloadedSnapshot<KubeClusterFacts | null>;

  constructor(
    @Inject(KubeNamespacesRepository) repository: KubeNamespacesRepository,
    @Inject(Config) config: Config,
  ) {
    this.snapshot = new ReloadedSnapshot(() => repository.facts(), () => config.tokenCacheTtlMs);
  }

  /** Why a job's pods may not be made in `namespace`, or null when they may (or no cluster is known). */
  async jobsRefusal(namespace: string): Promise<string | null> {
    let facts = await this.snapshot.current();
    if (facts !== null && !facts.namespaces.has(namespace)) facts = await this.snapshot.reload();
    if (facts === null) return null;
    return jobsNamespaceRefusal(namespace, { ownNamespace: facts.ownNamespace, createNamespaces: facts.createNamespaces, exists: facts.namespaces.has(namespace) });
  }

  /** For each of a team's namespaces, why it may not have it (Quartermaster's own), or null — read fresh, once. */
  async teamRefusals(namespaces: readonly string[]): Promise<(string | null)[]> {
    const facts = await this.snapshot.reload();
    return namespaces.map((namespace) => (facts === null ? null : ownNamespaceRefusal(namespace, facts.ownNamespace)));
  }
}
