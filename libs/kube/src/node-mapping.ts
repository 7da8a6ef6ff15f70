import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterNode, Flavor, NodeTopology } from '#core';
import { DEFAULT_SCHEDULER_NAME, DEFAULT_TOPOLOGY_KEYS, type TopologyLabelKeys } from './labels.js';
import { isTerminalPod, podRequests, schedulerNameOf } from './pod-resources.js';
import { count, cpuMillis, memoryMiB } from './quantity.js';

/** A flavor as the Kubernetes sync sees it: the core's Flavor plus how its nodes are recognised. */
export interface KubeFlavor extends Pick<Flavor, 'name' | 'resourceName'> {
  /** Every one of these labels must be on the node (e.g. `nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3`). */
  nodeLabels?: Record<string, string>;
  /** Per-flavor overrides of the label keys topology is read from. */
  topologyKeys?: Partial<TopologyLabelKeys>;
}

export interface NodeMappingOptions {
  /** Pods with this schedulerName are Quartermaster's own (tracked as allocations, not as `external`). */
  schedulerName?: string;
}

/** Taints the node lifecycle controller puts on nodes that are not ready. */
const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

/**
 * The flavor of a node: its resourceName is in the node's allocatable and all its nodeLabels match.
 * When several match, the one with the most nodeLabels (most specific) wins; ties go to the earlier flavor.
 */
export function flavorOfNode<F extends KubeFlavor>(node: V1Node, flavors: readonly F[]): F | null {
  const allocatable = node.status?.allocatable ?? {};
  const labels = node.metadata?.labels ?? {};
  let best: F | null = null;
  let bestSpecificity = -1;
  for (const flavor of flavors) {
    if (!(flavor.resourceName in allocatable)) continue;
    const required = Object.entries(flavor.nodeLabels ?? {});
    if (!required.every(([key, value]) => labels[key] === value)) continue;
    if (required.length > bestSpecificity) {
      best = flavor;
      bestSpecificity = required.length;
    }
  }
  return best;
}

/** Ready condition True, no not-ready/unreachable taint, not cordoned, not being deleted. */
export function isNodeSchedulable(node: V1Node): boolean {
  if (node.spec?.unschedulable === true) return false;
  if (node.metadata?.deletionTimestamp) return false;
  if ((node.spec?.taints ?? []).some((taint) => NOT_READY_TAINTS.has(taint.key))) return false;
  const ready = (node.status?.conditions ?? []).find((condition) => condition.type === 'Ready');
  return ready?.status === 'True';
}

export function topologyOfNode(node: V1Node, keys: Partial<TopologyLabelKeys> = {}): NodeTopology {
  const labels = node.metadata?.labels ?? {};
  const resolved: TopologyLabelKeys = { ...DEFAULT_TOPOLOGY_KEYS, ...keys };
  const topology: NodeTopology = {};
  for (const level of ['zone', 'block', 'domain', 'tpuShape'] as const) {
    const value = labels[resolved[level]];
    if (value !== undefined && value !== '') topology[level] = value;
  }
  return topology;
}

/**
 * Maps a Kubernetes Node to the core's ClusterNode, or `null` when no flavor matches it (CPU-only nodes,
 * accelerators Quartermaster is not configured for).
 *
 * `pods` (any set; those not on this node are ignored) supplies the capacity held by work of other
 * schedulers: non-terminal pods bound to the node whose schedulerName is not ours count as `external`,
 * and so do terminating pods of ours (they hold the node until they are gone).
 * Node capacity rounds down, pod requests round up.
 */
export function nodeFromKube(
  node: V1Node,
  flavors: readonly KubeFlavor[],
  pods: readonly V1Pod[] = [],
  options: NodeMappingOptions = {},
): ClusterNode | null {
  const name = node.metadata?.name;
  if (!name) throw new Error('nodeFromKube: node has no metadata.name');
  const flavor = flavorOfNode(node, flavors);
  if (flavor === null) return null;
  const allocatable = node.status?.allocatable ?? {};
  const ours = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;

  const external = { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
  for (const pod of pods) {
    if (pod.spec?.nodeName !== name || isTerminalPod(pod)) continue;
    // Our own pods are counted by their allocations — until they terminate: their job's allocation is
    // released by then (cancel, failure, requeue, preemption) while the pod still holds the node.
    if (schedulerNameOf(pod) === ours && !pod.metadata?.deletionTimestamp) continue;
    const held = podRequests(pod, flavor.resourceName);
    external.accelerators += held.accelerators;
    external.cpuMillis += held.cpuMillis;
    external.memoryMiB += held.memoryMiB;
  }

  return {
    name,
    flavor: flavor.name,
    accelerators: count(allocatable[flavor.resourceName] ?? '0', 'floor'),
    cpuMillis: allocatable.cpu === undefined ? 0 : cpuMillis(allocatable.cpu, 'floor'),
    memoryMiB: allocatable.memory === undefined ? 0 : memoryMiB(allocatable.memory, 'floor'),
    topology: topologyOfNode(node, flavor.topologyKeys),
    schedulable: isNodeSchedulable(node),
    external,
    labels: { ...(node.metadata?.labels ?? {}) },
  };
}
