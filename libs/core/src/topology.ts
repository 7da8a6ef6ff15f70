/**
 * Topology requirements as node groups. A job with level `zone` / `block` / `domain` must fit entirely
 * inside one group of nodes sharing that label; a TPU job (`tpuShape`) inside one domain, counting only
 * the domain's nodes whose `tpuShape` equals the requested one. A node missing the label never matches.
 */
import type { ClusterNode, TopologyRequirement } from './model.js';

/** `none`, `zone`, `block`, `domain`, or `tpu:<shape>`: identifies one way of grouping nodes. */
export type GroupingKey = string;

export function groupingOf(req: TopologyRequirement): GroupingKey {
  if (req.tpuShape !== undefined && req.tpuShape !== '') return `tpu:${req.tpuShape}`;
  return req.level;
}

/** The group `node` belongs to under `grouping`, or null when it carries no such label. */
export function groupOfNode(node: ClusterNode, grouping: GroupingKey): string | null {
  const t = node.topology ?? {};
  switch (grouping) {
    case 'none':
      return '';
    case 'zone':
      return t.zone ?? null;
    case 'block':
      return t.block ?? null;
    case 'domain':
      return t.domain ?? null;
    default: {
      const shape = grouping.slice('tpu:'.length);
      return t.domain !== undefined && t.tpuShape === shape ? t.domain : null;
    }
  }
}

/** Words for messages: "block", "TPU slice of shape 2x4". */
export function describeGrouping(grouping: GroupingKey): string {
  if (grouping.startsWith('tpu:')) return `TPU slice of shape ${grouping.slice(4)}`;
  return grouping === 'domain' ? 'domain' : grouping;
}

/**
 * Where nodes get the label a grouping reads, for messages: ` (node label nvidia.com/gpu.clique)`, or for a
 * TPU slice ` (nodes with the same cloud.google.com/gke-nodepool and cloud.google.com/gke-tpu-topology=2x4)`.
 * Empty when the flavor does not say.
 */
export function groupingLabelsHint(grouping: GroupingKey, labels: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>> | undefined): string {
  if (labels === undefined) return '';
  if (grouping.startsWith('tpu:')) {
    if (!labels.domain || !labels.tpuShape) return '';
    return ` (nodes with the same ${labels.domain} and ${labels.tpuShape}=${grouping.slice(4)})`;
  }
  const key = grouping === 'zone' || grouping === 'block' || grouping === 'domain' ? labels[grouping] : undefined;
  return key ? ` (node label ${key})` : '';
}
