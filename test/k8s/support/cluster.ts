// Helpers for tests of the `k8s` Jest project, which run against the real kube-apiserver that
// test/k8s/controlplane/global-setup.ts starts (KUBECONFIG points at it). There is no kubelet: tests create
// Node objects themselves and play the kubelet's part (pod status) where they need it.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';

export function testKubeConfig(): KubeConfig {
  const path = process.env.KUBECONFIG;
  if (!path) throw new Error('KUBECONFIG is not set: run these tests through the k8s Jest project (npm run test:k8s)');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** `<prefix>-<8 hex>`: names that do not collide across test files and runs against one apiserver. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export interface FakeNodeOptions {
  labels?: Record<string, string>;
  /** Extended resources in allocatable (and capacity), e.g. `{ 'nvidia.com/gpu': '8' }`. */
  extended?: Record<string, string>;
  cpu?: string;
  memory?: string;
  ready?: boolean;
  unschedulable?: boolean;
}

/** A Node as a kubelet with a device plugin would register it. */
export function fakeNode(name: string, options: FakeNodeOptions = {}): V1Node {
  const resources = { cpu: options.cpu ?? '96', memory: options.memory ?? '1Ti', pods: '110', ...(options.extended ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...(options.labels ?? {}) } },
    spec: { unschedulable: options.unschedulable ?? false },
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: [
        {
          type: 'Ready',
          status: options.ready === false ? 'False' : 'True',
          reason: options.ready === false ? 'KubeletNotReady' : 'KubeletReady',
          message: 'set by the test',
          lastHeartbeatTime: new Date(),
          lastTransitionTime: new Date(),
        },
      ],
    },
  };
}

export async function createNamespace(core: CoreV1Api, name: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name } } });
}

/**
 * Removes what a test made. Pods are deleted at once (grace period 0: no kubelet will confirm a graceful
 * deletion); the namespace is left Terminating (no namespace controller runs), which is harmless.
 */
export async function cleanUp(core: CoreV1Api, namespace: string, nodes: string[]): Promise<void> {
  const pods = await core.listNamespacedPod({ namespace });
  await Promise.all(
    pods.items.map((pod: V1Pod) =>
      core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => undefined),
    ),
  );
  await Promise.all(nodes.map((name) => core.deleteNode({ name }).catch(() => undefined)));
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
}
