// Smoke test of the test control plane itself (real etcd + kube-apiserver, no kubelet): everything the
// scheduler will do against Kubernetes works here with the plain client: fake GPU nodes, a pod for the
// `quartermaster` scheduler, binding, a kubelet-style status update, eviction.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';

const core = testKubeConfig().makeApiClient(CoreV1Api);
const namespace = uniqueName('smoke');
const nodeA = uniqueName('gpu-a');
const nodeB = uniqueName('gpu-b');

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

function gpuPod(name: string): V1Pod {
  return {
    metadata: { name, namespace, labels: { 'quartermaster.io/job-id': 'smoke-job' } },
    spec: {
      schedulerName: 'quartermaster',
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: 'registry.example/trainer:1',
          resources: { requests: { cpu: '4', memory: '16Gi', 'nvidia.com/gpu': '4' }, limits: { 'nvidia.com/gpu': '4' } },
        },
      ],
    },
  };
}

describe('test control plane (etcd + kube-apiserver)', () => {
  beforeAll(async () => {
    await createNamespace(core, namespace);
    for (const [name, clique] of [
      [nodeA, 'nvl-1'],
      [nodeB, 'nvl-2'],
    ] as const) {
      await core.createNode({
        body: fakeNode(name, {
          labels: {
            'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
            'topology.kubernetes.io/zone': 'z1',
            'nvidia.com/gpu.clique': clique,
          },
          extended: { 'nvidia.com/gpu': '8' },
        }),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await cleanUp(core, namespace, [nodeA, nodeB]);
  }, 60_000);

  it('keeps fake nodes with allocatable GPUs, labels and a Ready condition', async () => {
    const node = await core.readNode({ name: nodeA });
    expect(node.status?.allocatable?.['nvidia.com/gpu']).toBe('8');
    expect(node.metadata?.labels?.['nvidia.com/gpu.product']).toBe('NVIDIA-H100-80GB-HBM3');
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // TaintNodesByCondition is off: no not-ready taint was added by admission.
    expect(node.spec?.taints ?? []).toEqual([]);
  });

  it('creates a pod for the quartermaster scheduler, binds it, and a kubelet-style status patch makes it Running', async () => {
    const created = await core.createNamespacedPod({ namespace, body: gpuPod('replica-0') });
    expect(created.spec?.nodeName).toBeUndefined();
    expect(created.spec?.schedulerName).toBe('quartermaster');
    // ServiceAccount admission is off: no token volume is injected.
    expect(created.spec?.volumes ?? []).toEqual([]);

    await core.createNamespacedPodBinding({
      name: 'replica-0',
      namespace,
      body: { metadata: { name: 'replica-0', uid: created.metadata!.uid! }, target: { apiVersion: 'v1', kind: 'Node', name: nodeA } },
    });
    const bound = await core.readNamespacedPod({ name: 'replica-0', namespace });
    expect(bound.spec?.nodeName).toBe(nodeA);
    expect(bound.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');

    // A second binding is refused: a pod is bound once.
    const rebind = core.createNamespacedPodBinding({
      name: 'replica-0',
      namespace,
      body: { metadata: { name: 'replica-0' }, target: { apiVersion: 'v1', kind: 'Node', name: nodeB } },
    });
    expect(await statusOf(rebind)).toBe(409);

    const now = new Date();
    await core.patchNamespacedPodStatus(
      {
        name: 'replica-0',
        namespace,
        body: {
          status: {
            phase: 'Running',
            hostIP: '10.1.0.7',
            podIP: '10.2.0.7',
            startTime: now.toISOString(),
            conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now.toISOString() }],
            containerStatuses: [
              {
                name: 'main',
                image: 'registry.example/trainer:1',
                imageID: '',
                ready: true,
                restartCount: 0,
                started: true,
                state: { running: { startedAt: now.toISOString() } },
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const running = await core.readNamespacedPod({ name: 'replica-0', namespace });
    expect(running.status?.phase).toBe('Running');
    expect(running.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  }, 30_000);

  it('evicts a bound pod through the Eviction API (graceful: it is marked for deletion)', async () => {
    await core.createNamespacedPod({ namespace, body: gpuPod('replica-1') });
    await core.createNamespacedPodBinding({
      name: 'replica-1',
      namespace,
      body: { metadata: { name: 'replica-1' }, target: { apiVersion: 'v1', kind: 'Node', name: nodeB } },
    });
    await core.createNamespacedPodEviction({
      name: 'replica-1',
      namespace,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'replica-1', namespace } },
    });
    // Bound pods are deleted gracefully: the kubelet would stop the containers and remove the object.
    const evicted = await core.readNamespacedPod({ name: 'replica-1', namespace });
    expect(evicted.metadata?.deletionTimestamp).toBeDefined();

    const missing = core.createNamespacedPodEviction({
      name: 'no-such-pod',
      namespace,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'no-such-pod', namespace } },
    });
    expect(await statusOf(missing)).toBe(404);
  }, 30_000);

  it('deletes an unbound pod at once', async () => {
    await core.createNamespacedPod({ namespace, body: gpuPod('replica-2') });
    await core.deleteNamespacedPod({ name: 'replica-2', namespace });
    expect(await statusOf(core.readNamespacedPod({ name: 'replica-2', namespace }))).toBe(404);
  });
});
