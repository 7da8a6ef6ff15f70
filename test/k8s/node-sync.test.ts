// ClusterNodeSync, KubeLeaseStore and gang import (libs/kube) against the real kube-apiserver.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { ClusterNode } from '#core';
import { ClusterNodeSync, KubeCluster, KubeLeaseStore, type KubeFlavor } from '#kube';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('node-sync');
const cluster = new KubeCluster(kc, { namespace });
const product = uniqueName('NVIDIA-H100');
const flavors: KubeFlavor[] = [{ name: 'h100-80gb', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': product } }];
const nodeName = uniqueName('sync-gpu');

async function eventually<T>(check: () => T | undefined): Promise<T> {
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function gpuPod(name: string, scheduler: string | undefined, gpus: string): V1Pod {
  return {
    metadata: { name, namespace },
    spec: {
      nodeName,
      ...(scheduler ? { schedulerName: scheduler } : {}),
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '2' }, limits: { 'nvidia.com/gpu': gpus } } }],
    },
  };
}

describe('ClusterNodeSync against a real kube-apiserver', () => {
  let sync: ClusterNodeSync;
  let changes = 0;
  const node = (): ClusterNode | undefined => sync.nodes().find((n) => n.name === nodeName);

  beforeAll(async () => {
    await createNamespace(core, namespace);
    sync = await ClusterNodeSync.start(cluster, flavors, { onChange: () => changes++ });
  }, 60_000);

  afterAll(async () => {
    await sync.stop();
    await cleanUp(core, namespace, [nodeName]);
  }, 60_000);

  it('follows nodes, other schedulers\' pods (external), cordon, readiness, flavor changes and deletion', async () => {
    await core.createNode({ body: fakeNode(nodeName, { labels: { 'nvidia.com/gpu.product': product }, extended: { 'nvidia.com/gpu': '8' } }) });
    expect(await eventually(node)).toMatchObject({ flavor: 'h100-80gb', accelerators: 8, schedulable: true, external: { accelerators: 0 } });
    expect(changes).toBeGreaterThan(0);

    await core.createNamespacedPod({ namespace, body: gpuPod('foreign', undefined, '2') });
    await core.createNamespacedPod({ namespace, body: gpuPod('ours', 'quartermaster', '4') });
    await eventually(() => (node()?.external?.accelerators === 2 ? true : undefined));
    expect(node()?.external).toEqual({ accelerators: 2, cpuMillis: 2000, memoryMiB: 0 });

    // The foreign pod ends: its capacity is free again.
    await cluster.patchPodStatus('foreign', { phase: 'Succeeded' });
    await eventually(() => (node()?.external?.accelerators === 0 ? true : undefined));

    await core.patchNode({ name: nodeName, body: { spec: { unschedulable: true } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await eventually(() => (node()?.schedulable === false ? true : undefined));
    await core.patchNode({ name: nodeName, body: { spec: { unschedulable: false } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await eventually(() => (node()?.schedulable === true ? true : undefined));
    await core.patchNodeStatus(
      { name: nodeName, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'test' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await eventually(() => (node()?.schedulable === false ? true : undefined));

    sync.setFlavors([]);
    expect(node()).toBeUndefined();
    sync.setFlavors(flavors);
    expect(node()).toBeDefined();

    await core.deleteNode({ name: nodeName });
    await eventually(() => (node() === undefined ? true : undefined));
  }, 60_000);

  it('finds annotated foreign gangs across namespaces', async () => {
    const annotations = { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': 'sweep', 'quartermaster.io/gang-size': '2' };
    for (const name of ['sweep-0', 'sweep-1']) {
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name, annotations }, spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }] } },
      });
    }
    // A gang with a pod already bound (by someone else) is not importable: its bound pod is not listed.
    const half = { ...annotations, 'quartermaster.io/gang': 'half' };
    for (const [name, nodeName] of [['half-0', 'some-node'], ['half-1', undefined]] as const) {
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name, annotations: half }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }] } },
      });
    }
    const { gangs } = await cluster.listGangImports(flavors);
    expect(gangs.find((g) => g.key === `${namespace}/half`)).toMatchObject({ complete: false });
    const gang = gangs.find((g) => g.key === `${namespace}/sweep`);
    expect(gang).toMatchObject({ team: 'vision', replicas: 2, acceleratorsPerReplica: 8, complete: true, flavors: ['h100-80gb'] });
    expect(gang?.pods.map((p) => p.name)).toEqual(['sweep-0', 'sweep-1']);
  }, 30_000);

  it('backs a leader elector with a Lease (KubeLeaseStore)', async () => {
    const store = new KubeLeaseStore(cluster);
    const lease = uniqueName('elector');
    expect(await store.acquireOrRenew(lease, 'pod-a', 5000)).toMatchObject({ held: true, fencingToken: 1n });
    expect(await store.acquireOrRenew(lease, 'pod-b', 5000)).toMatchObject({ held: false, holder: 'pod-a' });
    await store.release(lease, 'pod-a');
    expect(await store.acquireOrRenew(lease, 'pod-b', 5000)).toMatchObject({ held: true, fencingToken: 2n });
  }, 30_000);
});
