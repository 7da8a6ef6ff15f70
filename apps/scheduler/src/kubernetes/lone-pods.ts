import type { V1Pod } from '@kubernetes/client-node';
import { namespaceTeam } from '#core';
import { LABEL_TEAM, isLoneAcceleratorPod, type KubeFlavor } from '#kube';
import type { KubeJobStore } from './kube-job-store.js';

/** Whom a lone accelerator pod is charged to (`team`), why to nobody (`refusal`), or null for any other pod. */
export type LonePodCharge = (pod: V1Pod) => Promise<{ team: string } | { refusal: string } | null>;

/** Flavors and teams' namespaces are read again when older than this. */
const FRESH_MS = 1000;

/**
 * The extender's view of lone accelerator pods (QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS=charge): a pod of a
 * delegating profile that asks for accelerators and names no gang or job is charged to its namespace's team
 * (libs/core namespaceTeam) — the gang importer makes it that team's one-pod job — or refused. Pods of teams'
 * workloads are the workload importer's and are asked about before this.
 */
export function lonePodCharge(store: KubeJobStore, delegating: ReadonlySet<string>): LonePodCharge {
  let read: { at: number; flavors: KubeFlavor[]; teams: Map<string, string[]> } | null = null;
  const current = async (): Promise<{ flavors: KubeFlavor[]; teams: Map<string, string[]> }> => {
    if (read === null || Date.now() - read.at > FRESH_MS) {
      const [flavors, teams] = await Promise.all([store.kubeFlavors(), store.teamNamespaces()]);
      read = { at: Date.now(), flavors, teams };
    }
    return read;
  };
  return async (pod) => {
    const { flavors, teams } = await current();
    if (!isLoneAcceleratorPod(pod, flavors, delegating)) return null;
    return namespaceTeam(pod.metadata?.namespace ?? 'default', teams, pod.metadata?.labels?.[LABEL_TEAM]);
  };
}
