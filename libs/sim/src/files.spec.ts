import { describe, expect, it } from '@jest/globals';
import { changeNodes, parseClusterFile } from './cluster-file.js';
import { distribution, jainIndex } from './metrics.js';
import { changeQuota, deriveTenancy, parseTenancyFile, splitLargestRemainder } from './tenancy-file.js';

const clusterYaml = `
flavors:
  - { name: h100-80gb, relativeSpeed: 2, costPerHour: 4 }
  - { name: a100-40gb }
nodeGroups:
  - { flavor: h100-80gb, count: 2, acceleratorsPerNode: 8, zone: z1, nodesPerDomain: 1 }
  - { flavor: a100-40gb, count: 1, acceleratorsPerNode: 4 }
`;

describe('cluster file', () => {
  it('builds named nodes with topology from node groups', () => {
    const c = parseClusterFile(clusterYaml, 'c.yaml');
    expect(c.flavors.map((f) => [f.name, f.resourceName, f.relativeSpeed])).toEqual([
      ['h100-80gb', 'nvidia.com/gpu', 2],
      ['a100-40gb', 'nvidia.com/gpu', 1],
    ]);
    expect(c.nodes.map((n) => [n.name, n.accelerators, n.topology])).toEqual([
      ['h100-80gb-0', 8, { zone: 'z1', domain: 'h100-80gb-d0' }],
      ['h100-80gb-1', 8, { zone: 'z1', domain: 'h100-80gb-d1' }],
      ['a100-40gb-0', 4, {}],
    ]);
  });

  it('names the field that is wrong', () => {
    expect(() => parseClusterFile('flavors: [{name: x}]\nnodeGroups: [{flavor: y, count: 1, acceleratorsPerNode: 8}]', 'c.yaml')).toThrow(
      'c.yaml: nodeGroups[0].flavor: unknown flavor "y" (defined: x)',
    );
    expect(() => parseClusterFile('flavors: [{name: x}]\nnodeGroups: [{flavor: x, count: -1, acceleratorsPerNode: 8}]', 'c.yaml')).toThrow(
      'c.yaml: nodeGroups[0].count: must be a non-negative integer, got -1',
    );
    expect(() => parseClusterFile('{', 'c.json')).toThrow(/^c\.json: cannot parse/);
  });

  it('adds and removes nodes for what-if runs', () => {
    const c = parseClusterFile(clusterYaml, 'c.yaml');
    expect(changeNodes(c, 'h100-80gb', 2).nodes.filter((n) => n.flavor === 'h100-80gb').map((n) => n.name)).toEqual(['h100-80gb-0', 'h100-80gb-1', 'h100-80gb-added-0', 'h100-80gb-added-1']);
    expect(changeNodes(c, 'h100-80gb', -1).nodes.map((n) => n.name)).toEqual(['h100-80gb-0', 'a100-40gb-0']);
    expect(() => changeNodes(c, 'tpu', 1)).toThrow("--nodes: unknown flavor 'tpu'");
    expect(() => changeNodes(c, 'a100-40gb', -2)).toThrow('--nodes: cannot remove 2 nodes of a100-40gb, the cluster has 1');
  });
});

describe('tenancy', () => {
  const cluster = parseClusterFile(clusterYaml, 'c.yaml');

  it('reads teams and quotas, shorthand and full', () => {
    const t = parseTenancyFile('cohorts: [r]\nteams:\n  - name: vision\n    cohort: r\n    quotas: { h100-80gb: 8, a100-40gb: { nominal: 4, borrowingLimit: 0 } }\n', 't.yaml', cluster);
    expect(t.quotas).toEqual([
      { team: 'vision', flavor: 'h100-80gb', nominal: 8, borrowingLimit: null, lendingLimit: null },
      { team: 'vision', flavor: 'a100-40gb', nominal: 4, borrowingLimit: 0, lendingLimit: null, cpuMillisLimit: null, memoryMiBLimit: null },
    ]);
    expect(changeQuota(t, 'vision', 'h100-80gb', 48, cluster).quotas[0]!.nominal).toBe(48);
    expect(() => changeQuota(t, 'nlp', 'h100-80gb', 1, cluster)).toThrow("--quota: unknown team 'nlp'");
  });

  it('names the wrong field', () => {
    expect(() => parseTenancyFile('teams: [{name: a, cohort: nope, quotas: {}}]', 't.yaml', cluster)).toThrow('t.yaml: teams[0].cohort: unknown cohort "nope" (declared: none)');
    expect(() => parseTenancyFile('teams: [{name: a, quotas: {tpu: 1}}]', 't.yaml', cluster)).toThrow("t.yaml: teams[0].quotas.tpu: unknown flavor 'tpu'");
  });

  it('derives quotas in proportion to weights, summing to the capacity', () => {
    expect(splitLargestRemainder(10, [1, 1, 1])).toEqual([4, 3, 3]);
    const t = deriveTenancy(['b', 'a', 'c'], { a: 3, b: 1 }, cluster);
    expect(t.quotas.filter((q) => q.flavor === 'h100-80gb').map((q) => [q.team, q.nominal])).toEqual([
      ['a', 12],
      ['b', 4],
      ['c', 0],
    ]);
  });
});

describe('metrics helpers', () => {
  it('uses nearest-rank percentiles', () => {
    expect(distribution([4, 1, 3, 2])).toEqual({ count: 4, mean: 2.5, median: 2, p99: 4, max: 4 });
    expect(distribution([])).toEqual({ count: 0, mean: 0, median: 0, p99: 0, max: 0 });
  });

  it("computes Jain's index", () => {
    expect(jainIndex([1, 1, 1])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
  });
});

describe('applySpeedFloor', () => {
  it('keeps only the flavors where a job runs at least floor × its best rate', async () => {
    const { applySpeedFloor } = await import('./speed-floor.js');
    const job = { id: 'j', line: 1, source: 't', team: 'a', submitSeconds: 0, replicas: 1, acceleratorsPerReplica: 1, flavors: ['v100', 'p100', 'k80'], work: 1, rates: { v100: 10, p100: 6, k80: 1 }, priority: 0, preemptible: true };
    expect(applySpeedFloor([job], 0.5)[0]!.flavors).toEqual(['v100', 'p100']);
    expect(applySpeedFloor([job], 0)[0]).toBe(job);
  });
});
