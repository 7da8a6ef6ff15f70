import type { V1Pod } from '@kubernetes/client-node';
import { cpuMillis, count, memoryMiB } from './quantity.js';
import { KUBE_DEFAULT_SCHEDULER_NAME } from './labels.js';

/** What a pod holds on its node, in Quartermaster's units (rounded up). */
export interface PodRequests {
  cpuMillis: number;
  memoryMiB: number;
  /** Count of the given extended resource (e.g. `nvidia.com/gpu`). */
  accelerators: number;
}

type ResourceMap = Record<string, string> | undefined;

/** A container's request for a resource; extended resources may be given as limits only (request = limit). */
function requestOf(resources: { requests?: ResourceMap; limits?: ResourceMap } | undefined, name: string): string | undefined {
  return resources?.requests?.[name] ?? resources?.limits?.[name];
}

function sumContainers(
  containers: { resources?: { requests?: ResourceMap; limits?: ResourceMap } }[] | undefined,
  name: string,
  toUnits: (quantity: string) => number,
): { sum: number; max: number } {
  let sum = 0;
  let max = 0;
  for (const container of containers ?? []) {
    const quantity = requestOf(container.resources, name);
    if (quantity === undefined) continue;
    const units = toUnits(quantity);
    sum += units;
    max = Math.max(max, units);
  }
  return { sum, max };
}

/**
 * A pod's effective request the way kube-scheduler counts it: max(sum of containers, largest init
 * container) plus pod overhead. CPU and memory requests only (no implicit limits-as-requests for them,
 * as Kubernetes defaults a missing request to the limit at admission time, so the stored pod has it).
 */
export function podRequests(pod: V1Pod, acceleratorResource: string | null): PodRequests {
  const spec = pod.spec;
  const effective = (name: string, toUnits: (quantity: string) => number): number => {
    const main = sumContainers(spec?.containers, name, toUnits).sum;
    const init = sumContainers(spec?.initContainers, name, toUnits).max;
    const overhead = spec?.overhead?.[name];
    return Math.max(main, init) + (overhead === undefined ? 0 : toUnits(overhead));
  };
  return {
    cpuMillis: effective('cpu', (q) => cpuMillis(q, 'ceil')),
    memoryMiB: effective('memory', (q) => memoryMiB(q, 'ceil')),
    accelerators: acceleratorResource === null ? 0 : effective(acceleratorResource, (q) => count(q, 'ceil')),
  };
}

/** Succeeded and Failed pods hold nothing. */
export function isTerminalPod(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

export function schedulerNameOf(pod: V1Pod): string {
  return pod.spec?.schedulerName || KUBE_DEFAULT_SCHEDULER_NAME;
}

/**
 * Reasons a kubelet gives a pod it fails without the pod's own doing: admission refused (`OutOf<resource>`
 * when the node has no room — another scheduler's pod took it —, a device plugin's UnexpectedAdmissionError,
 * NodeAffinity), node-pressure eviction, node shutdown. Such a failure says nothing about the job.
 */
const NODE_REASONS = new Set(['UnexpectedAdmissionError', 'NodeAffinity', 'NodeName', 'NodePorts', 'Evicted', 'Terminated', 'Shutdown', 'NodeShutdown']);

/** `OutOfnvidia.com/gpu: …` when a Failed pod was failed by its node rather than by itself; null otherwise. */
export function failedByNode(pod: V1Pod): string | null {
  if (pod.status?.phase !== 'Failed') return null;
  const reason = pod.status.reason ?? '';
  if (!reason.startsWith('OutOf') && !NODE_REASONS.has(reason)) return null;
  return pod.status.message ? `${reason}: ${pod.status.message}` : reason;
}
