/**
 * Where a flavor's nodes say where they sit: the node label key read for each topology level. Each
 * accelerator kind has defaults matching what its platform labels nodes with; a flavor may override any.
 */
import type { FlavorKind } from './model.js';

export type TopologyLabelLevel = 'zone' | 'block' | 'domain' | 'tpuShape';
export type TopologyLabels = Record<TopologyLabelLevel, string>;

export const TOPOLOGY_LABEL_LEVELS: readonly TopologyLabelLevel[] = ['zone', 'block', 'domain', 'tpuShape'];

const ZONE = 'topology.kubernetes.io/zone';
const TPU_TOPOLOGY = 'cloud.google.com/gke-tpu-topology';

/**
 * - NVIDIA GPUs: the NVLink domain is the GPU operator's `nvidia.com/gpu.clique` (GB200 NVL72 and the like).
 * - Google TPUs: a multi-host slice is one GKE node pool (created and removed whole), its shape the
 *   node pool's `cloud.google.com/gke-tpu-topology`; blocks are GCE's `cloud.google.com/gce-topology-block`.
 * - AWS Trainium: EKS's network topology labels; layer 3 is the one nearest the instance.
 * - Intel Gaudi: no platform label; `quartermaster.io/domain` for whatever the operator puts there.
 */
export const DEFAULT_TOPOLOGY_LABELS: Readonly<Record<FlavorKind, Readonly<TopologyLabels>>> = {
  'nvidia-gpu': { zone: ZONE, block: 'quartermaster.io/block', domain: 'nvidia.com/gpu.clique', tpuShape: TPU_TOPOLOGY },
  'google-tpu': { zone: ZONE, block: 'cloud.google.com/gce-topology-block', domain: 'cloud.google.com/gke-nodepool', tpuShape: TPU_TOPOLOGY },
  'aws-trainium': { zone: ZONE, block: 'topology.k8s.aws/network-node-layer-2', domain: 'topology.k8s.aws/network-node-layer-3', tpuShape: TPU_TOPOLOGY },
  'intel-gaudi': { zone: ZONE, block: 'quartermaster.io/block', domain: 'quartermaster.io/domain', tpuShape: TPU_TOPOLOGY },
};

/** The kind's defaults with the flavor's overrides on top (unknown levels and empty keys are ignored). */
export function topologyLabelsOf(kind: FlavorKind, overrides: Partial<Record<string, unknown>> | null = {}): TopologyLabels {
  const labels: TopologyLabels = { ...(DEFAULT_TOPOLOGY_LABELS[kind] ?? DEFAULT_TOPOLOGY_LABELS['nvidia-gpu']) };
  for (const level of TOPOLOGY_LABEL_LEVELS) {
    const key = overrides?.[level];
    if (typeof key === 'string' && key !== '') labels[level] = key;
  }
  return labels;
}
