// The real upstream controllers run against the suite's kube-apiserver (test/k8s/controllers): each turns its
// project's own minimal example into pods (Pending: no kubelet, no scheduler here). Proves the wiring —
// builds, CRDs, webhooks, ports — that the workload gang tests (workloads-*.test.ts) rely on.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { buildControllers, startControllers, type RunningControllers } from './controllers/controllers.js';
import { cleanUp, createNamespace, testKubeConfig, uniqueName } from './support/cluster.js';
import { eventually } from './scheduler-harness.js';
import { examples } from './controllers/examples.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('controllers');
let controllers: RunningControllers;
let objects: KubernetesObjectApi;

async function pods(selector?: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace, ...(selector ? { labelSelector: selector } : {}) })).items;
}

async function apply(object: KubernetesObject): Promise<void> {
  await objects.create({ ...object, metadata: { ...object.metadata, namespace } });
}

beforeAll(async () => {
  controllers = await startControllers(['kube-controller-manager', 'jobset', 'lws', 'kuberay', 'trainer']);
  objects = KubernetesObjectApi.makeApiClient(kc);
  await createNamespace(core, namespace);
}, 30 * 60_000);

afterAll(async () => {
  await controllers?.stop();
  await cleanUp(core, namespace, []);
}, 120_000);

describe('upstream controllers turn their own minimal examples into pods', () => {
  it('kube-controller-manager: an Indexed Job (kubernetes.io docs) → parallelism pods with completion indexes', async () => {
    await apply(examples.indexedJob());
    const got = await eventually('3 pods of the indexed Job', async () => {
      const list = await pods('job-name=indexed-job');
      return list.length === 3 ? list : undefined;
    });
    expect(got.map((p) => p.metadata?.labels?.['batch.kubernetes.io/job-completion-index']).sort()).toEqual(['0', '1', '2']);
    expect(got.every((p) => p.metadata?.ownerReferences?.[0]?.kind === 'Job')).toBe(true);
  });

  it('JobSet: paralleljobs (site/static/examples/simple) → 4 workers + 1 driver, through its mutating webhook', async () => {
    await apply(examples.parallelJobs());
    const got = await eventually('5 pods of the JobSet', async () => {
      const list = await pods('jobset.sigs.k8s.io/jobset-name=paralleljobs');
      return list.length === 5 ? list : undefined;
    });
    const byJob = new Map<string, number>();
    for (const pod of got) {
      const rj = pod.metadata!.labels!['jobset.sigs.k8s.io/replicatedjob-name']!;
      byJob.set(rj, (byJob.get(rj) ?? 0) + 1);
    }
    expect(Object.fromEntries(byJob)).toEqual({ workers: 4, driver: 1 });
  });

  it('LeaderWorkerSet: config/samples/leaderworkerset_v1_leaderworkerset.yaml → 3 groups of a leader and 3 workers', async () => {
    const [lws] = examples.leaderWorkerSetSample(controllers);
    await apply(lws!);
    const got = await eventually('12 pods of the LeaderWorkerSet', async () => {
      const list = await pods('leaderworkerset.sigs.k8s.io/name=leaderworkerset-sample');
      // Workers come once the leader pod exists (the leader's pod webhook labels it; the LWS pod controller
      // then creates the group's worker StatefulSet).
      return list.length === 12 ? list : undefined;
    }, 90_000);
    const groups = new Set(got.map((p) => p.metadata!.labels!['leaderworkerset.sigs.k8s.io/group-index']));
    expect([...groups].sort()).toEqual(['0', '1', '2']);
  });

  it('KubeRay: config/samples/ray-cluster.sample.yaml → a head and a worker pod', async () => {
    for (const object of examples.rayClusterSample(controllers)) await apply(object);
    const got = await eventually('head + worker of the RayCluster', async () => {
      const list = await pods('ray.io/cluster=raycluster-kuberay');
      return list.length === 2 ? list : undefined;
    });
    expect(got.map((p) => p.metadata!.labels!['ray.io/node-type']).sort()).toEqual(['head', 'worker']);
  });

  it('Trainer: a TrainJob on the torch-distributed runtime → a JobSet → numNodes pods', async () => {
    await apply(examples.trainJob());
    const got = await eventually('2 pods of the TrainJob', async () => {
      const list = await pods('jobset.sigs.k8s.io/jobset-name=pytorch-simple');
      return list.length === 2 ? list : undefined;
    }, 90_000);
    expect(got.every((p) => p.metadata?.labels?.['jobset.sigs.k8s.io/replicatedjob-name'] === 'node')).toBe(true);
  });

  it('builds are cached: asking again for all five does no work', async () => {
    const dirs = await buildControllers(['kube-controller-manager', 'jobset', 'lws', 'kuberay', 'trainer']);
    expect([...dirs.keys()]).toEqual(['kube-controller-manager', 'jobset', 'lws', 'kuberay', 'trainer']);
    for (const dir of dirs.values()) expect(readFileSync(join(dir, '.stamp'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });
});
