import type { ClusterNode, Flavor, FlavorKind } from '#core';
import { parse as parseYaml } from 'yaml';
import type { ClusterSpec } from './types.js';

/**
 * A cluster file (YAML or JSON):
 * ```yaml
 * flavors:
 *   - { name: v100, kind: nvidia-gpu, relativeSpeed: 1, costPerHour: 2.48 }   # kind, resourceName optional
 * nodeGroups:
 *   - { flavor: v100, count: 4, acceleratorsPerNode: 8, zone: z1, block: b1, nodesPerDomain: 4 }
 * ```
 * Nodes are named `<flavor>-<n>` (n counts per flavor from 0). Topology keys are optional; with
 * `nodesPerDomain`, consecutive nodes of the group share an NVLink domain `<flavor>-d<k>`.
 */
const KINDS: Record<FlavorKind, string> = {
  'nvidia-gpu': 'nvidia.com/gpu',
  'aws-trainium': 'aws.amazon.com/neuron',
  'intel-gaudi': 'habana.ai/gaudi',
  'google-tpu': 'google.com/tpu',
};
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const NODE_CPU_MILLIS = 128_000;
export const NODE_MEMORY_MIB = 1_048_576;

export function parseStructured(text: string, source: string): unknown {
  try {
    return source.endsWith('.json') ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown);
  } catch (e) {
    throw new Error(`${source}: cannot parse (${(e as Error).message.split('\n')[0]})`, { cause: e });
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function fieldError(source: string, path: string, message: string): Error {
  return new Error(`${source}: ${path}: ${message}`);
}

function positiveInt(v: unknown, source: string, path: string, allowZero = false): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || (!allowZero && v === 0)) {
    throw fieldError(source, path, `must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

export function parseClusterFile(text: string, source: string): ClusterSpec {
  const data = parseStructured(text, source);
  if (!isRecord(data)) throw new Error(`${source}: expected a mapping with 'flavors' and 'nodeGroups'`);
  if (!Array.isArray(data.flavors) || data.flavors.length === 0) throw fieldError(source, 'flavors', 'must be a non-empty list');
  if (!Array.isArray(data.nodeGroups) || data.nodeGroups.length === 0) throw fieldError(source, 'nodeGroups', 'must be a non-empty list');
  const flavors: Flavor[] = data.flavors.map((raw: unknown, i: number) => {
    const path = `flavors[${i}]`;
    if (!isRecord(raw)) throw fieldError(source, path, 'must be a mapping');
    if (typeof raw.name !== 'string' || !NAME.test(raw.name)) throw fieldError(source, `${path}.name`, `must be a DNS label, got ${JSON.stringify(raw.name)}`);
    const kind = (raw.kind ?? 'nvidia-gpu') as FlavorKind;
    if (!(kind in KINDS)) throw fieldError(source, `${path}.kind`, `must be one of ${Object.keys(KINDS).join(', ')}`);
    const speed = raw.relativeSpeed ?? 1;
    if (typeof speed !== 'number' || !(speed > 0)) throw fieldError(source, `${path}.relativeSpeed`, 'must be a positive number');
    const cost = raw.costPerHour ?? 0;
    if (typeof cost !== 'number' || !(cost >= 0)) throw fieldError(source, `${path}.costPerHour`, 'must be a non-negative number');
    const resourceName = typeof raw.resourceName === 'string' ? raw.resourceName : KINDS[kind];
    return { name: raw.name, kind, resourceName, relativeSpeed: speed, costPerHour: cost };
  });
  const names = new Set<string>();
  for (const f of flavors) {
    if (names.has(f.name)) throw fieldError(source, 'flavors', `duplicate flavor '${f.name}'`);
    names.add(f.name);
  }
  const groups = data.nodeGroups.map((raw: unknown, i: number) => {
    const path = `nodeGroups[${i}]`;
    if (!isRecord(raw)) throw fieldError(source, path, 'must be a mapping');
    if (typeof raw.flavor !== 'string' || !names.has(raw.flavor)) {
      throw fieldError(source, `${path}.flavor`, `unknown flavor ${JSON.stringify(raw.flavor)} (defined: ${[...names].join(', ')})`);
    }
    const optionalString = (key: string): string | undefined => {
      const v = raw[key];
      if (v === undefined) return undefined;
      if (typeof v !== 'string') throw fieldError(source, `${path}.${key}`, 'must be a string');
      return v;
    };
    return {
      flavor: raw.flavor,
      count: positiveInt(raw.count, source, `${path}.count`, true),
      acceleratorsPerNode: positiveInt(raw.acceleratorsPerNode, source, `${path}.acceleratorsPerNode`),
      zone: optionalString('zone'),
      block: optionalString('block'),
      nodesPerDomain: raw.nodesPerDomain === undefined ? undefined : positiveInt(raw.nodesPerDomain, source, `${path}.nodesPerDomain`),
    };
  });
  return buildCluster(flavors, groups);
}

export interface NodeGroup {
  flavor: string;
  count: number;
  acceleratorsPerNode: number;
  zone?: string | undefined;
  block?: string | undefined;
  nodesPerDomain?: number | undefined;
}

export function buildCluster(flavors: Flavor[], groups: NodeGroup[]): ClusterSpec {
  const counters = new Map<string, number>();
  const nodes: ClusterNode[] = [];
  for (const g of groups) {
    for (let k = 0; k < g.count; k++) {
      const n = counters.get(g.flavor) ?? 0;
      counters.set(g.flavor, n + 1);
      const topology: ClusterNode['topology'] = {};
      if (g.zone !== undefined) topology.zone = g.zone;
      if (g.block !== undefined) topology.block = g.block;
      if (g.nodesPerDomain !== undefined) topology.domain = `${g.flavor}-d${Math.floor(n / g.nodesPerDomain)}`;
      nodes.push({
        name: `${g.flavor}-${n}`,
        flavor: g.flavor,
        accelerators: g.acceleratorsPerNode,
        cpuMillis: NODE_CPU_MILLIS,
        memoryMiB: NODE_MEMORY_MIB,
        topology,
        schedulable: true,
      });
    }
  }
  return { flavors, nodes };
}

/** Adds (or with a negative delta removes, from the end) nodes of a flavor: `--nodes h100-80gb=+16` (+16 nodes). */
export function changeNodes(cluster: ClusterSpec, flavor: string, delta: number): ClusterSpec {
  if (!cluster.flavors.some((f) => f.name === flavor)) {
    throw new Error(`--nodes: unknown flavor '${flavor}' (cluster has ${cluster.flavors.map((f) => f.name).join(', ')})`);
  }
  const ofFlavor = cluster.nodes.filter((n) => n.flavor === flavor);
  if (delta < 0) {
    if (-delta > ofFlavor.length) throw new Error(`--nodes: cannot remove ${-delta} nodes of ${flavor}, the cluster has ${ofFlavor.length}`);
    const drop = new Set(ofFlavor.slice(ofFlavor.length + delta).map((n) => n.name));
    return { ...cluster, nodes: cluster.nodes.filter((n) => !drop.has(n.name)) };
  }
  const template = ofFlavor[ofFlavor.length - 1];
  if (template === undefined) throw new Error(`--nodes: the cluster has no node of ${flavor} to copy the shape from`);
  const taken = new Set(cluster.nodes.map((n) => n.name));
  const added: ClusterNode[] = [];
  for (let i = 0; added.length < delta; i++) {
    const name = `${flavor}-added-${i}`;
    if (!taken.has(name)) added.push({ ...template, name, topology: { ...template.topology } });
  }
  return { ...cluster, nodes: [...cluster.nodes, ...added] };
}
