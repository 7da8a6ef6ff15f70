import { describe, expect, it } from '@jest/globals';
import { makeFlavor, makeJob, makeNode, makeNodes, makeQuota, snapshot } from '#testing';
import { topologyLabelsOf } from './topology-labels.js';
import { runCycle } from './cycle.js';

const H100 = 'h100-80gb';
const TPU = 'tpu-v5e';
const quota = makeQuota('vision', H100).nominal(1000);

/** Nodes of the single admission, in replica order. */
function placed(s: ReturnType<ReturnType<typeof snapshot>['build']>): string[] | undefined {
  return runCycle(s).admissions[0]?.placement.map((p) => p.node);
}

describe('gang placement on nodes', () => {
  it.each([
    {
      name: 'best fit: the tightest node that holds the replica, so whole nodes stay free',
      nodes: [makeNode('full').accelerators(8), makeNode('half').accelerators(8).external(4)],
      job: makeJob('j').accelerators(4),
      wantNodes: ['half'],
    },
    {
      name: 'several replicas share a node when it has room',
      nodes: [makeNode('a').accelerators(8), makeNode('b').accelerators(8).external(6)],
      job: makeJob('j').replicas(3).accelerators(2),
      wantNodes: ['b', 'a', 'a'],
    },
    {
      name: 'never over a node CPU: the replica goes where CPU is free',
      nodes: [makeNode('tight').accelerators(8).external(4).cpu(1000), makeNode('roomy').accelerators(8)],
      job: makeJob('j').accelerators(2).cpu(4000),
      wantNodes: ['roomy'],
    },
    {
      name: 'never over a node memory',
      nodes: [makeNode('small').accelerators(8).external(4).memory(1000), makeNode('big').accelerators(8)],
      job: makeJob('j').accelerators(2).memory(4000),
      wantNodes: ['big'],
    },
    {
      name: 'an unschedulable (cordoned) node receives no work',
      nodes: [makeNode('cordoned').accelerators(8).unschedulable(), makeNode('ok').accelerators(8)],
      job: makeJob('j').accelerators(8),
      wantNodes: ['ok'],
    },
  ])('$name', ({ nodes, job, wantNodes }) => {
    expect(placed(snapshot().nodes(...nodes).quotas(quota).pending(job).build())).toEqual(wantNodes);
  });

  it('fragmentation: quota says yes but no node has 8 free → not admitted, INSUFFICIENT_CAPACITY', () => {
    const r = runCycle(
      snapshot()
        .nodes(...makeNodes('n', 4, (b) => b.accelerators(8).external(4)))
        .quotas(quota)
        .pending(makeJob('j').replicas(1).accelerators(8))
        .build(),
    );
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]).toMatchObject({ code: 'INSUFFICIENT_CAPACITY' });
    expect(r.pending[0]!.message).toContain('needs 1 × 8 free h100-80gb; room for 0 now (16 h100-80gb free in total)');
  });

  it('a gang is all or nothing: 3 replicas of 8 when two nodes are free is not admitted at all', () => {
    const nodes = [...makeNodes('n', 2), makeNode('busy').external(1)];
    const r = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(3).accelerators(8)).build());
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]!.code).toBe('INSUFFICIENT_CAPACITY');
  });

  it('a gang larger than the whole schedulable fleet is UNSATISFIABLE', () => {
    const r = runCycle(snapshot().nodes(...makeNodes('n', 2)).quotas(quota).pending(makeJob('j').replicas(3).accelerators(8)).build());
    expect(r.pending[0]).toMatchObject({ code: 'UNSATISFIABLE', message: 'needs 24 h100-80gb; all schedulable h100-80gb nodes together have 16' });
  });
});

describe('topology', () => {
  const blocks = [
    ...makeNodes('b1', 2, (b) => b.zone('z1').block('b1')),
    ...makeNodes('b2', 4, (b) => b.zone('z1').block('b2')),
    ...makeNodes('b3', 3, (b) => b.zone('z2').block('b3')),
    makeNode('nolabel'),
  ];
  it.each([
    {
      name: 'block: the smallest block that holds the whole gang (best fit)',
      job: makeJob('j').replicas(3).accelerators(8).topology('block'),
      wantNodes: ['b3-0', 'b3-1', 'b3-2'],
    },
    {
      name: 'block: a gang larger than every block but one goes to that one',
      job: makeJob('j').replicas(4).accelerators(8).topology('block'),
      wantNodes: ['b2-0', 'b2-1', 'b2-2', 'b2-3'],
    },
    {
      name: 'zone: all replicas in one zone',
      job: makeJob('j').replicas(5).accelerators(8).topology('zone'),
      wantNodes: ['b1-0', 'b1-1', 'b2-0', 'b2-1', 'b2-2'],
    },
    {
      name: 'none: anywhere, a node without labels included',
      job: makeJob('j').replicas(10).accelerators(8),
      wantNodes: undefined,
    },
  ])('$name', ({ job, wantNodes }) => {
    const nodes = placed(snapshot().nodes(...blocks).quotas(quota).pending(job).build());
    if (wantNodes === undefined) expect(nodes).toHaveLength(10);
    else expect(nodes).toEqual(wantNodes);
  });

  it('a gang no block can hold right now is TOPOLOGY_UNSATISFIABLE with the best block named', () => {
    const busy = [...blocks, makeNode('b2-x').zone('z1').block('b2').external(8)].map((b) => b.build());
    const nodes = busy.map((n) => (n.name === 'b2-0' ? { ...n, external: { accelerators: 8, cpuMillis: 0, memoryMiB: 0 } } : n));
    const r = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(4).accelerators(8).topology('block')).build());
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]).toMatchObject({ code: 'TOPOLOGY_UNSATISFIABLE' });
    expect(r.pending[0]!.message).toBe('needs 4 × 8 free h100-80gb in one block; best block has room for 3');
  });

  it('a gang larger than every block is UNSATISFIABLE', () => {
    const r = runCycle(snapshot().nodes(...blocks).quotas(quota).pending(makeJob('j').replicas(5).accelerators(8).topology('block')).build());
    expect(r.pending[0]).toMatchObject({ code: 'UNSATISFIABLE', message: 'needs 40 h100-80gb in one block; the largest block has 32' });
  });

  it('a node missing the level label never matches a topology requirement', () => {
    const r = runCycle(
      snapshot().nodes(makeNode('a'), makeNode('b')).quotas(quota).pending(makeJob('j').replicas(2).accelerators(8).topology('domain')).build(),
    );
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]!.message).toContain('no schedulable h100-80gb node has a domain');
  });

  it('NVLink domain: replicas stay inside one domain', () => {
    const nodes = [
      ...makeNodes('d1', 2, (b) => b.domain('d1')),
      ...makeNodes('d2', 2, (b) => b.domain('d2').external(2)),
    ];
    expect(placed(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(4).accelerators(4).topology('domain')).build())).toEqual([
      'd1-0',
      'd1-0',
      'd1-1',
      'd1-1',
    ]);
  });

  it('TPU: tpuShape requires one domain whose nodes have that shape', () => {
    const nodes = [
      ...makeNodes('s2x2', 1, (b) => b.flavor(TPU).accelerators(4).domain('slice-a').tpuShape('2x2')),
      ...makeNodes('s2x4', 2, (b) => b.flavor(TPU).accelerators(4).domain('slice-b').tpuShape('2x4')),
    ];
    const job = makeJob('j').flavors(TPU).replicas(2).accelerators(4).topology('domain', '2x4');
    const r = runCycle(snapshot().nodes(...nodes).quotas(makeQuota('vision', TPU).nominal(100)).pending(job).build());
    expect(r.admissions[0]!.placement.map((p) => p.node)).toEqual(['s2x4-0', 's2x4-1']);
    const small = makeJob('k').flavors(TPU).replicas(1).accelerators(4).topology('domain', '4x4');
    const r2 = runCycle(snapshot().nodes(...nodes).quotas(makeQuota('vision', TPU).nominal(100)).pending(small).build());
    expect(r2.pending[0]!.message).toContain('no schedulable tpu-v5e node has a TPU slice of shape 4x4');
  });

  it("a topology no node has names the flavor's topology labels, so the message points where they are read", () => {
    const tpu = { ...makeFlavor(TPU).kind('google-tpu').build(), topologyLabels: topologyLabelsOf('google-tpu') };
    const nodes = makeNodes('s', 2, (b) => b.flavor(TPU).accelerators(4).tpuShape('2x4')); // a shape, but no slice (domain)
    const job = makeJob('j').flavors(TPU).replicas(2).accelerators(4).topology('domain', '2x4');
    const r = runCycle(snapshot().flavors(tpu).nodes(...nodes).quotas(makeQuota('vision', TPU).nominal(100)).pending(job).build());
    expect(r.pending[0]!.message).toBe(
      'needs 8 tpu-v5e in one TPU slice of shape 2x4; no schedulable tpu-v5e node has a TPU slice of shape 2x4 (nodes with the same cloud.google.com/gke-nodepool and cloud.google.com/gke-tpu-topology=2x4)',
    );
    const h100 = { ...makeFlavor(H100).build(), topologyLabels: topologyLabelsOf('nvidia-gpu', { domain: 'example.com/nvl' }) };
    const r2 = runCycle(snapshot().flavors(h100).nodes(makeNode('a')).quotas(quota).pending(makeJob('k').accelerators(8).topology('domain')).build());
    expect(r2.pending[0]!.message).toContain('no schedulable h100-80gb node has a domain (node label example.com/nvl)');
  });
});

describe('elastic gangs', () => {
  it.each([
    { name: 'takes the largest count that fits placement', free: 3, quotaN: 100, wantReplicas: 3 },
    { name: 'takes the largest count that fits quota', free: 8, quotaN: 16, wantReplicas: 2 },
    { name: 'never fewer than minReplicas', free: 1, quotaN: 100, wantReplicas: undefined },
  ])('$name', ({ free, quotaN, wantReplicas }) => {
    const nodes = makeNodes('n', free);
    const r = runCycle(
      snapshot()
        .nodes(...nodes)
        .quotas(makeQuota('vision', H100).nominal(quotaN))
        .pending(makeJob('e').replicas(6).minReplicas(2).accelerators(8))
        .options({ preemption: false })
        .build(),
    );
    expect(r.admissions[0]?.replicas).toBe(wantReplicas);
  });
});
