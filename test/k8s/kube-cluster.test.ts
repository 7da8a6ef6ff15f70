// KubeCluster (libs/kube) against the real kube-apiserver of the k8s test project.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import {
  KubeApiError,
  KubeCluster,
  PodBoundElsewhereError,
  PodConflictError,
  PodNotFoundError,
  PodTerminatingError,
  podManifestForReplica,
  type KubeFlavor,
  type PodJob,
} from '#kube';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('kube-cluster');
const cluster = new KubeCluster(kc, { namespace });
const run = uniqueName('run'); // label value that marks this file's nodes
const gpuA = uniqueName('h100-a');
const gpuB = uniqueName('h100-b');
const cpuNode = uniqueName('cpu');
const nodes = [gpuA, gpuB, cpuNode];

const product = `NVIDIA-H100-${run}`; // unique per run, so other files' nodes never match this flavor
const flavors: KubeFlavor[] = [
  { name: 'h100-80gb', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': product } },
];

const job: PodJob = {
  id: 'job-1',
  name: 'llama-ft',
  team: 'vision',
  priority: 10,
  replicas: 2,
  acceleratorsPerReplica: 4,
  template: { image: 'registry.example/llama:2', command: ['torchrun'], cpuMillis: 8000, memoryMiB: 65536 },
  flavor: { name: 'h100-80gb', resourceName: 'nvidia.com/gpu' },
};

/** Polls until `check` returns a value (not undefined); the test's own timeout bounds it. */
async function eventually<T>(check: () => T | undefined): Promise<T> {
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('KubeCluster against a real kube-apiserver', () => {
  beforeAll(async () => {
    await createNamespace(core, namespace);
    const labels = (zone: string, clique: string): Record<string, string> => ({
      'qm-test-run': run,
      'nvidia.com/gpu.product': product,
      'topology.kubernetes.io/zone': zone,
      'nvidia.com/gpu.clique': clique,
    });
    await core.createNode({
      body: fakeNode(gpuA, { labels: labels('z1', 'nvl-1'), extended: { 'nvidia.com/gpu': '8' } }),
    });
    await core.createNode({
      body: fakeNode(gpuB, {
        labels: labels('z1', 'nvl-2'),
        extended: { 'nvidia.com/gpu': '8' },
        unschedulable: true,
      }),
    });
    await core.createNode({
      body: fakeNode(cpuNode, { labels: { 'qm-test-run': run }, cpu: '64', memory: '256Gi' }),
    });
  }, 60_000);

  afterAll(async () => {
    await cleanUp(core, namespace, nodes);
  }, 60_000);

  it("maps nodes to the core model, with other schedulers' pods as external capacity", async () => {
    // A pod the default scheduler placed (here: created bound) on gpuA holds 2 GPUs and 1.5 CPUs.
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'foreign' },
        spec: {
          nodeName: gpuA,
          containers: [
            {
              name: 'c',
              image: 'x',
              resources: { requests: { cpu: '1500m', memory: '1Gi' }, limits: { 'nvidia.com/gpu': '2' } },
            },
          ],
        },
      },
    });
    try {
      const mapped = (await cluster.listClusterNodes(flavors)).filter((n) => nodes.includes(n.name));
      expect(mapped).toEqual(
        [
          {
            name: gpuA,
            flavor: 'h100-80gb',
            accelerators: 8,
            cpuMillis: 96000,
            memoryMiB: 1024 * 1024,
            topology: { zone: 'z1', domain: 'nvl-1' },
            // The node's labels, for node selectors (8763070).
            labels: expect.objectContaining({
              'kubernetes.io/hostname': gpuA,
              'nvidia.com/gpu.clique': 'nvl-1',
              'topology.kubernetes.io/zone': 'z1',
            }),
            schedulable: true,
            external: { accelerators: 2, cpuMillis: 1500, memoryMiB: 1024 },
          },
          {
            name: gpuB,
            flavor: 'h100-80gb',
            accelerators: 8,
            cpuMillis: 96000,
            memoryMiB: 1024 * 1024,
            topology: { zone: 'z1', domain: 'nvl-2' },
            labels: expect.objectContaining({
              'kubernetes.io/hostname': gpuB,
              'nvidia.com/gpu.clique': 'nvl-2',
            }),
            schedulable: false,
            external: { accelerators: 0, cpuMillis: 0, memoryMiB: 0 },
          },
        ].sort((a, b) => a.name.localeCompare(b.name)),
      );
    } finally {
      // Deleted whatever the assertions found: the next tests read gpuA's external capacity.
      await cluster.deletePod('foreign', { gracePeriodSeconds: 0 });
    }
  }, 30_000);

  it('lists nodes by label and watches them (add, update, delete)', async () => {
    expect(
      (await cluster.listNodes({ labelSelector: `qm-test-run=${run}` })).map((n) => n.metadata?.name).sort(),
    ).toEqual([...nodes].sort());

    const seen: string[] = [];
    const watch = await cluster.watchNodes(
      {
        onAdd: (n: V1Node) => seen.push(`add ${n.metadata?.name}`),
        onUpdate: (n: V1Node) =>
          seen.push(`update ${n.metadata?.name} ${n.spec?.unschedulable === true ? 'cordoned' : 'open'}`),
        onDelete: (n: V1Node) => seen.push(`delete ${n.metadata?.name}`),
      },
      { labelSelector: `qm-test-run=${run}` },
    );
    try {
      expect(watch.list().length).toBe(3);
      const extra = uniqueName('late');
      nodes.push(extra);
      await core.createNode({
        body: fakeNode(extra, { labels: { 'qm-test-run': run }, extended: { 'nvidia.com/gpu': '8' } }),
      });
      await eventually(() => (seen.includes(`add ${extra}`) ? true : undefined));
      await core.patchNode(
        { name: extra, body: { spec: { unschedulable: true } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await eventually(() => (seen.includes(`update ${extra} cordoned`) ? true : undefined));
      expect(watch.get(extra)?.spec?.unschedulable).toBe(true);
      await core.deleteNode({ name: extra });
      await eventually(() => (seen.includes(`delete ${extra}`) ? true : undefined));
      expect(watch.get(extra)).toBeUndefined();
    } finally {
      await watch.stop();
    }
  }, 30_000);

  it('creates a replica pod idempotently and refuses a name taken by another job', async () => {
    const manifest = podManifestForReplica(job, 0, undefined, { namespace });
    const first = await cluster.createPod(manifest);
    expect(first.created).toBe(true);
    const again = await cluster.createPod(manifest);
    expect(again).toMatchObject({ created: false });
    expect(again.pod.metadata?.uid).toBe(first.pod.metadata?.uid);

    const impostor = podManifestForReplica({ ...job, id: 'job-2' }, 0, undefined, { namespace });
    impostor.metadata!.name = manifest.metadata!.name;
    expect(await rejection(cluster.createPod(impostor))).toBeInstanceOf(PodConflictError);

    expect((await cluster.listJobPods('job-1')).map((p) => p.metadata?.name)).toEqual([
      manifest.metadata!.name,
    ]);
  }, 30_000);

  it('keeps hundreds of concurrent calls on keep-alive connections without spurious failures', async () => {
    // What the worker does under load (QM_WORKER_CONCURRENCY 128, two calls per bind). With requests
    // queued on a capped agent, node-fetch 2 failed about half of them with "Premature close".
    const pooled = KubeCluster.fromKubeconfig(process.env.KUBECONFIG, { namespace });
    const burst = Array.from({ length: 300 }, (_, i) =>
      podManifestForReplica({ ...job, id: `burst-${i}`, name: `burst-${i}`, replicas: 1 }, 0, undefined, {
        namespace,
      }),
    );
    const results = await Promise.allSettled(burst.map((manifest) => pooled.createPod(manifest)));
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
    expect(failures).toEqual([]);
    await Promise.all(
      burst.map((manifest) =>
        pooled.deletePod(manifest.metadata!.name!, { namespace, gracePeriodSeconds: 0 }),
      ),
    );
  }, 60_000);

  it('binds once; rebinding to the same node is fine, to another node is a typed error', async () => {
    const name = podManifestForReplica(job, 0).metadata!.name!;
    const uid = (await cluster.getPod(name))!.metadata!.uid!;
    expect(await cluster.bindPod(name, gpuA, { uid })).toBe('bound');
    expect(await cluster.bindPod(name, gpuA)).toBe('already-bound');
    const elsewhere = await rejection(cluster.bindPod(name, gpuB));
    expect(elsewhere).toBeInstanceOf(PodBoundElsewhereError);
    expect(elsewhere).toMatchObject({ boundNode: gpuA, requestedNode: gpuB });
    expect(await rejection(cluster.bindPod('no-such-pod', gpuA))).toBeInstanceOf(PodNotFoundError);
    expect((await cluster.getPod(name))?.spec?.nodeName).toBe(gpuA);

    // A pod bound to the node by us is not external capacity.
    const [a] = (await cluster.listClusterNodes(flavors)).filter((n) => n.name === gpuA);
    expect(a?.external).toEqual({ accelerators: 0, cpuMillis: 0, memoryMiB: 0 });
  }, 30_000);

  it("patches pod status like a kubelet and watches only Quartermaster's pods with a field selector", async () => {
    const seen: string[] = [];
    const watch = await cluster.watchPods(
      { onUpdate: (p: V1Pod) => seen.push(`${p.metadata?.name} ${p.status?.phase}`) },
      { fieldSelector: 'spec.schedulerName=quartermaster' },
    );
    try {
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name: 'not-ours' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      });
      const name = podManifestForReplica(job, 0).metadata!.name!;
      const running = await cluster.patchPodStatus(name, {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
      });
      expect(running.status?.phase).toBe('Running');
      await eventually(() => (seen.includes(`${name} Running`) ? true : undefined));
      expect(watch.list().map((p) => p.metadata?.name)).toEqual([name]);
      expect(await rejection(cluster.patchPodStatus('no-such-pod', { phase: 'Running' }))).toBeInstanceOf(
        PodNotFoundError,
      );
    } finally {
      await watch.stop();
    }
  }, 30_000);

  it('evicts and deletes idempotently; a replica recreated while its old pod terminates is told to wait', async () => {
    const manifest = podManifestForReplica(job, 0, undefined, { namespace });
    const name = manifest.metadata!.name!;
    expect(await cluster.evictPod(name)).toBe('evicted');
    expect((await cluster.getPod(name))?.metadata?.deletionTimestamp).toBeDefined(); // bound: graceful
    expect(await rejection(cluster.createPod(manifest))).toBeInstanceOf(PodTerminatingError);
    expect(await cluster.deletePod(name, { gracePeriodSeconds: 0 })).toBe('deleted');
    expect(await cluster.getPod(name)).toBeNull();
    expect(await cluster.evictPod(name)).toBe('not-found');
    expect(await cluster.deletePod(name)).toBe('not-found');

    // With a uid, only that incarnation is deleted.
    const { pod } = await cluster.createPod(manifest);
    expect(await cluster.deletePod(name, { uid: 'another-incarnation' })).toBe('not-found');
    expect(await cluster.getPod(name)).not.toBeNull();
    expect(await cluster.deletePod(name, { uid: pod.metadata!.uid! })).toBe('deleted');

    // Evictions too: a pod of the same name made since is left alone.
    const { pod: again } = await cluster.createPod(manifest);
    expect(await cluster.evictPod(name, { uid: pod.metadata!.uid! })).toBe('not-found');
    expect((await cluster.getPod(name))?.metadata).toMatchObject({ uid: again.metadata!.uid! });
    expect((await cluster.getPod(name))?.metadata?.deletionTimestamp).toBeUndefined();
    expect(await cluster.evictPod(name, { uid: again.metadata!.uid!, gracePeriodSeconds: 0 })).toBe('evicted');
    expect(await cluster.getPod(name)).toBeNull();
  }, 30_000);

  it('elects a leader with a Lease: renew, wait, release, take over on expiry, fencing token grows', async () => {
    const lease = uniqueName('scheduler');
    const a = await cluster.acquireOrRenewLease(lease, 'a', 15_000);
    expect(a).toMatchObject({ held: true, holder: 'a', fencingToken: 1n });
    expect(await cluster.acquireOrRenewLease(lease, 'b', 15_000)).toMatchObject({ held: false, holder: 'a' });
    expect(await cluster.acquireOrRenewLease(lease, 'a', 15_000)).toMatchObject({
      held: true,
      fencingToken: 1n,
    });

    await cluster.releaseLease(lease, 'b'); // not b's: no effect
    expect(await cluster.acquireOrRenewLease(lease, 'b', 15_000)).toMatchObject({ held: false });
    await cluster.releaseLease(lease, 'a');
    expect(await cluster.acquireOrRenewLease(lease, 'b', 15_000)).toMatchObject({
      held: true,
      holder: 'b',
      fencingToken: 2n,
    });

    // b stops renewing; once its lease has expired (seen from a later clock) a takes it over.
    const later = new Date(Date.now() + 60_000);
    expect(await cluster.acquireOrRenewLease(lease, 'a', 15_000, { now: later })).toMatchObject({
      held: true,
      holder: 'a',
      fencingToken: 3n,
    });
    const stored = await cluster.readLease(lease);
    expect(stored?.spec).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 2,
    });
  }, 30_000);

  it('lets exactly one of several racing candidates win a fresh Lease', async () => {
    const lease = uniqueName('race');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((holder) => cluster.acquireOrRenewLease(lease, holder, 10_000)),
    );
    expect(results.filter((r) => r.held)).toHaveLength(1);
    const winner = results.find((r) => r.held)!.holder;
    expect(results.every((r) => r.holder === winner)).toBe(true);
  }, 30_000);

  it('fails with a clear KubeApiError when the credentials are wrong', async () => {
    const bad = new KubeConfig();
    bad.loadFromOptions({
      clusters: kc.clusters,
      users: kc.users.map((user) => ({ ...user, token: 'not-a-valid-token' })),
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
    const error = await rejection(new KubeCluster(bad).listNodes());
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(String((error as Error).message)).toMatch(/^list nodes failed \(HTTP 401\)/);
  });
});
