/**
 * Topology requirements as node groups. A job with level `zone` / `block` / `domain` must fit entirely
 * inside one group of nodes sharing that label; a TPU job (`tpuShape`) inside one domain, counting only
 * the domain's nodes whose `tpuShape` equals the requested one. A node missing the label never matches.
 */
import type { ClusterNode, TopologyRequirement } from './model.js';

/**
 * `none`, `zone`, `block`, `domain`, or `tpu:<shape>`: identifies one way of grouping nodes. A job with a node
 * selector groups only the nodes that match it: `<base>|sel:<selector as JSON>` (e.g. `none|sel:[["zone","a"]]`:
 * one group of the matching nodes), so every placement path (fit, preemption, reservations) sees only those.
 */
export type GroupingKey = string;

const SELECTOR = '|sel:';

/** The selector's entries, sorted by key: the same selector always makes the same grouping key. */
function selectorEntries(selector: Record<string, string> | undefined): [string, string][] {
  if (selector === undefined || selector === null || typeof selector !== 'object') return [];
  return Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function groupingOf(req: TopologyRequirement): GroupingKey {
  const base = req.tpuShape !== undefined && req.tpuShape !== '' ? `tpu:${req.tpuShape}` : req.level;
  const selector = selectorEntries(req.nodeSelector);
  return selector.length === 0 ? base : `${base}${SELECTOR}${JSON.stringify(selector)}`;
}

const parsed = new Map<string, { base: GroupingKey; selector: [string, string][] }>();

/** The level part of a grouping and its node selector (empty when it has none). */
export function splitGrouping(grouping: GroupingKey): { base: GroupingKey; selector: [string, string][] } {
  const at = grouping.indexOf(SELECTOR);
  if (at < 0) return { base: grouping, selector: [] };
  let hit = parsed.get(grouping);
  if (hit === undefined) {
    hit = { base: grouping.slice(0, at), selector: JSON.parse(grouping.slice(at + SELECTOR.length)) as [string, string][] };
    if (parsed.size > 1000) parsed.clear();
    parsed.set(grouping, hit);
  }
  return hit;
}

/** Whether `node` carries every label of the selector. */
export function matchesSelector(node: ClusterNode, selector: readonly (readonly [string, string])[]): boolean {
  const labels = node.labels ?? {};
  for (const [key, value] of selector) if (labels[key] !== value) return false;
  return true;
}

/** `zone=us-east-1a, pool=spot`, for messages. */
export function describeSelector(selector: readonly (readonly [string, string])[]): string {
  return selector.map(([k, v]) => `${k}=${v}`).join(', ');
}

/** The group `node` belongs to under `grouping`, or null when it carries no such label (or does not match its selector). */
export function groupOfNode(node: ClusterNode, grouping: GroupingKey): string | null {
  if (grouping.includes(SELECTOR)) {
    const { base, selector } = splitGrouping(grouping);
    return matchesSelector(node, selector) ? groupOfNode(node, base) : null;
  }
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

/** Words for messages: "block", "TPU slice of shape 2x4", "block of nodes labelled zone=a", "set of nodes labelled zone=a". */
export function describeGrouping(grouping: GroupingKey): string {
  const { base, selector } = splitGrouping(grouping);
  const labelled = selector.length === 0 ? '' : ` of nodes labelled ${describeSelector(selector)}`;
  if (base.startsWith('tpu:')) return `TPU slice of shape ${base.slice(4)}${labelled}`;
  if (base === 'none') return `set${labelled}`;
  return `${base}${labelled}`;
}

/**
 * Where nodes get the label a grouping reads, for messages: ` (node label nvidia.com/gpu.clique)`, or for a
 * TPU slice ` (nodes with the same cloud.google.com/gke-nodepool and cloud.google.com/gke-tpu-topology=2x4)`.
 * Empty when the flavor does not say.
 */
export function groupingLabelsHint(grouping: GroupingKey, labels: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>> | undefined): string {
  if (labels === undefined) return '';
  grouping = splitGrouping(grouping).base;
  if (grouping.startsWith('tpu:')) {
    if (!labels.domain || !labels.tpuShape) return '';
    return ` (nodes with the same ${labels.domain} and ${labels.tpuShape}=${grouping.slice(4)})`;
  }
  const key = grouping === 'zone' || grouping === 'block' || grouping === 'domain' ? labels[grouping] : undefined;
  return key ? ` (node label ${key})` : '';
}
