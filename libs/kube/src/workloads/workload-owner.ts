import type { V1Pod } from '@kubernetes/client-node';
import { workloadKindOf } from './workload-kinds.js';
import { controllerOf, type KubeObject } from './workload.js';

/** Reads one object (an owner of a pod) from the API server; null when it does not exist. */
export type OwnerLookup = (ref: {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}) => Promise<KubeObject | null>;

/**
 * Kinds an owner chain passes through on its way to a workload: the workloads themselves, and the
 * StatefulSets and leader Pod between a LeaderWorkerSet and its workers' pods.
 */
function traversable(ref: { apiVersion: string; kind: string }): boolean {
  if (workloadKindOf(ref)) return true;
  return (
    (ref.kind === 'StatefulSet' && ref.apiVersion === 'apps/v1') ||
    (ref.kind === 'Pod' && ref.apiVersion === 'v1')
  );
}

const MAX_DEPTH = 8;

/**
 * The owners of a pod, nearest first, up to its top-level workload (the farthest owner that is a workload
 * kind: a Job owned by a JobSet owned by a TrainJob gives [Job, JobSet, TrainJob]). Follows controller
 * owner references through known kinds only (a CronJob's Job is a workload of its own; a Deployment's
 * pods are none). Null when no workload owns the pod, or an owner is gone or was replaced (uid differs).
 */
export async function workloadChain(pod: V1Pod, lookup: OwnerLookup): Promise<KubeObject[] | null> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const chain: KubeObject[] = [];
  let current: KubeObject = pod;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const ref = controllerOf(current);
    if (!ref || !traversable(ref)) break;
    const owner = await lookup({ apiVersion: ref.apiVersion, kind: ref.kind, namespace, name: ref.name });
    if (!owner || (ref.uid && owner.metadata?.uid !== ref.uid)) return null;
    chain.push({ ...owner, apiVersion: owner.apiVersion ?? ref.apiVersion, kind: owner.kind ?? ref.kind });
    current = owner;
  }
  let top = -1;
  chain.forEach((object, i) => {
    if (workloadKindOf(object)) top = i;
  });
  return top < 0 ? null : chain.slice(0, top + 1);
}
