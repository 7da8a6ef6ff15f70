import { describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { flavorOfNode, nodeFromKube, type KubeFlavor } from './node-mapping.js';

const H100: KubeFlavor = { name: 'h100-80gb', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } };
const A100: KubeFlavor = { name: 'a100-80gb', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' } };
const ANY_GPU: KubeFlavor = { name: 'any-gpu', resourceName: 'nvidia.com/gpu' };
const TRN: KubeFlavor = { name: 'trn1', resourceName: 'aws.amazon.com/neuron' };
const TPU: KubeFlavor = {
  name: 'tpu-v5e',
  resourceName: 'google.com/tpu',
  topologyKeys: { domain: 'cloud.google.com/gke-nodepool', block: 'example.com/rack' },
};

function node(name: string, options: { labels?: Record<string, string>; allocatable?: Record<string, string>; ready?: string; unschedulable?: boolean; taints?: { key: string; effect: string }[] } = {}): V1Node {
  return {
    metadata: { name, labels: options.labels ?? {} },
    spec: { unschedulable: options.unschedulable, taints: options.taints },
    status: {
      allocatable: options.allocatable ?? { cpu: '95900m', memory: '1056Gi', 'nvidia.com/gpu': '8' },
      conditions: options.ready === undefined ? [{ type: 'Ready', status: 'True' }] : [{ type: 'Ready', status: options.ready }],
    },
  };
}

function pod(name: string, nodeName: string | undefined, options: { scheduler?: string; phase?: string; gpus?: string; cpu?: string; memory?: string } = {}): V1Pod {
  return {
    metadata: { name, namespace: 'ns' },
    spec: {
      nodeName,
      schedulerName: options.scheduler,
      containers: [
        {
          name: 'c',
          resources: {
            requests: { cpu: options.cpu ?? '1', memory: options.memory ?? '1Gi' },
            limits: options.gpus ? { 'nvidia.com/gpu': options.gpus } : {},
          },
        },
      ],
    },
    status: { phase: options.phase ?? 'Running' },
  };
}

const h100Labels = {
  'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
  'topology.kubernetes.io/zone': 'us-east-1a',
  'quartermaster.io/block': 'b3',
  'nvidia.com/gpu.clique': 'nvl-7',
};

describe('nodeFromKube', () => {
  it('maps a labelled H100 node: flavor, allocatable, topology, schedulable', () => {
    expect(nodeFromKube(node('gpu-1', { labels: h100Labels }), [A100, H100])).toEqual({
      name: 'gpu-1',
      flavor: 'h100-80gb',
      accelerators: 8,
      cpuMillis: 95900,
      memoryMiB: 1056 * 1024,
      topology: { zone: 'us-east-1a', block: 'b3', domain: 'nvl-7' },
      schedulable: true,
      external: { accelerators: 0, cpuMillis: 0, memoryMiB: 0 },
      labels: h100Labels,
    });
  });

  it('needs the resource in allocatable and every flavor label', () => {
    expect(nodeFromKube(node('cpu-1', { labels: h100Labels, allocatable: { cpu: '64', memory: '256Gi' } }), [H100])).toBeNull();
    expect(nodeFromKube(node('gpu-2', { labels: { 'nvidia.com/gpu.product': 'Tesla-T4' } }), [H100, A100])).toBeNull();
  });

  it('prefers the most specific matching flavor, ties to the earlier one', () => {
    const h100 = node('gpu-1', { labels: h100Labels });
    expect(flavorOfNode(h100, [ANY_GPU, H100])?.name).toBe('h100-80gb');
    expect(flavorOfNode(node('gpu-3'), [ANY_GPU, H100])?.name).toBe('any-gpu');
    expect(flavorOfNode(node('gpu-3'), [ANY_GPU, { ...ANY_GPU, name: 'other' }])?.name).toBe('any-gpu');
  });

  it('reads other accelerators in their own resource, and topology keys per flavor', () => {
    const trn = node('trn-1', { allocatable: { cpu: '128', memory: '512Gi', 'aws.amazon.com/neuron': '16' } });
    expect(nodeFromKube(trn, [H100, TRN])).toMatchObject({ flavor: 'trn1', accelerators: 16, cpuMillis: 128000 });

    const tpu = node('tpu-1', {
      labels: { 'cloud.google.com/gke-nodepool': 'pool-4', 'example.com/rack': 'r9', 'cloud.google.com/gke-tpu-topology': '2x4', 'nvidia.com/gpu.clique': 'ignored' },
      allocatable: { cpu: '224', memory: '400Gi', 'google.com/tpu': '4' },
    });
    expect(nodeFromKube(tpu, [TPU])?.topology).toEqual({ block: 'r9', domain: 'pool-4', tpuShape: '2x4' });
  });

  it.each([
    ['cordoned', node('n', { labels: h100Labels, unschedulable: true })],
    ['NotReady', node('n', { labels: h100Labels, ready: 'False' })],
    ['Ready unknown', node('n', { labels: h100Labels, ready: 'Unknown' })],
    ['tainted unreachable', node('n', { labels: h100Labels, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] })],
  ])('is not schedulable when %s', (_case, kubeNode) => {
    expect(nodeFromKube(kubeNode, [H100])?.schedulable).toBe(false);
  });

  it('stays schedulable with the usual GPU taint', () => {
    const tainted = node('n', { labels: h100Labels, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] });
    expect(nodeFromKube(tainted, [H100])?.schedulable).toBe(true);
  });

  it('counts non-terminal pods of other schedulers on this node as external, rounded up', () => {
    const pods = [
      pod('foreign', 'gpu-1', { gpus: '2', cpu: '1500m', memory: '1G' }),
      pod('daemon', 'gpu-1', { scheduler: 'default-scheduler', cpu: '100m', memory: '64Mi' }),
      pod('ours', 'gpu-1', { scheduler: 'quartermaster', gpus: '4' }),
      pod('done', 'gpu-1', { gpus: '8', phase: 'Succeeded' }),
      pod('failed', 'gpu-1', { gpus: '8', phase: 'Failed' }),
      pod('elsewhere', 'gpu-2', { gpus: '8' }),
      pod('pending', undefined, { gpus: '8' }),
    ];
    expect(nodeFromKube(node('gpu-1', { labels: h100Labels }), [H100], pods)?.external).toEqual({
      accelerators: 2,
      cpuMillis: 1600,
      memoryMiB: 954 + 64,
    });
    expect(nodeFromKube(node('gpu-1', { labels: h100Labels }), [H100], pods, { schedulerName: 'other' })?.external?.accelerators).toBe(6);
  });

  it('counts terminating pods of ours as external: they hold the node until gone, after their allocation was released', () => {
    const terminating = { ...pod('ours-leaving', 'gpu-1', { scheduler: 'quartermaster', gpus: '8' }) };
    terminating.metadata = { ...terminating.metadata, deletionTimestamp: new Date() };
    const live = pod('ours', 'gpu-1', { scheduler: 'quartermaster', gpus: '4' });
    expect(nodeFromKube(node('gpu-1', { labels: h100Labels }), [H100], [terminating, live])?.external?.accelerators).toBe(8);
  });

  it('takes init containers and overhead into a pod\'s request like kube-scheduler', () => {
    const big: V1Pod = {
      metadata: { name: 'p' },
      spec: {
        nodeName: 'gpu-1',
        overhead: { cpu: '250m' },
        initContainers: [{ name: 'init', resources: { requests: { cpu: '4' } } }],
        containers: [
          { name: 'a', resources: { requests: { cpu: '1' } } },
          { name: 'b', resources: { requests: { cpu: '2' } } },
        ],
      },
      status: { phase: 'Pending' },
    };
    expect(nodeFromKube(node('gpu-1', { labels: h100Labels }), [H100], [big])?.external?.cpuMillis).toBe(4250);
  });

  it('rejects a node without a name and a malformed quantity', () => {
    expect(() => nodeFromKube({ metadata: {} }, [H100])).toThrow(/no metadata.name/);
    expect(() => nodeFromKube(node('n', { labels: h100Labels, allocatable: { 'nvidia.com/gpu': 'eight' } }), [H100])).toThrow(/invalid Kubernetes quantity "eight"/);
  });
});
