import type { Logger } from 'pino';
import { POD_SECURITY_ENFORCE_LABEL, jobsNamespaceRefusal, ownNamespaceRefusal, teamNamespaceLabels } from '#core';
import type { KubeCluster } from '#kube';
import type { KubernetesSettings } from './kubernetes-settings.js';

/** A namespace read within this long is not read again before a bind (its labels rarely change). */
const KNOWN_FOR_MS = 10_000;

/** Where a job's pods may be made: a refusal (the job fails), or whether the namespace enforces Pod Security `restricted`. */
export type NamespaceReadiness = { refusal: string } | { refusal: null; restricted: boolean };

/**
 * The namespaces the bind handler makes REST jobs' pods in: never Quartermaster's own; one that does not exist is
 * created (labelled with the team and its Pod Security level) when QM_KUBE_CREATE_NAMESPACES allows, else the job
 * fails naming it. Whether it enforces `restricted` decides the pods' securityContext.
 */
export class JobsNamespaces {
  private readonly known = new Map<string, { at: number; restricted: boolean }>();

  constructor(
    private readonly cluster: KubeCluster,
    private readonly settings: Pick<KubernetesSettings, 'ownNamespace' | 'createNamespaces' | 'namespacePodSecurity'>,
    private readonly logger: Logger,
  ) {}

  async prepare(namespace: string, team: string): Promise<NamespaceReadiness> {
    const own = ownNamespaceRefusal(namespace, this.settings.ownNamespace);
    if (own !== null) return { refusal: own };
    const known = this.known.get(namespace);
    if (known !== undefined && Date.now() - known.at < KNOWN_FOR_MS) return { refusal: null, restricted: known.restricted };
    let found = await this.cluster.getNamespace(namespace);
    if (found === null) {
      const missing = jobsNamespaceRefusal(namespace, { ownNamespace: this.settings.ownNamespace, createNamespaces: this.settings.createNamespaces, exists: false });
      if (missing !== null) return { refusal: missing };
      const made = await this.cluster.createNamespace(namespace, teamNamespaceLabels(team, this.settings.namespacePodSecurity));
      if (made.created) this.logger.info({ namespace, team, podSecurity: this.settings.namespacePodSecurity }, 'namespace created for the team\'s pods');
      found = made.namespace;
    }
    const restricted = found.metadata?.labels?.[POD_SECURITY_ENFORCE_LABEL] === 'restricted';
    this.known.set(namespace, { at: Date.now(), restricted });
    if (this.known.size > 10_000) this.known.delete(this.known.keys().next().value!);
    return { refusal: null, restricted };
  }
}
