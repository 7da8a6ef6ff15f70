// RayClusters gang-scheduled by Quartermaster, with the real KubeRay operator (v1.5.0): the upstream sample
// (a head and one worker) plus the team label is one job of 2 pods, bound where the core placed them; workers
// above a group's minReplicas are elastic (the gang starts with the head and the minimum when quota allows no
// more, the other workers wait and say why); a cluster over quota waits with its reason; a team within its
// nominal quota reclaims by evicting a borrowing team's cluster (KubeRay recreates the pods, which wait as
// the same job); deleting a RayCluster ends its job and releases the quota.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam, type Manifest } from './controllers/examples.js';
import { eventually, type QmEnv } from './scheduler-harness.js';
import {
  applyManifest,
  startWorkloadSuite,
  stopWorkloadSuite,
  boundPods,
  eventsOn,
  live,
  podsOf,
  runKubelet,
  scheduledCondition,
  used,
  workloadJob,
  teamPriorityClass,
} from './support/workloads.js';
import { replicaOfPod } from '#kube';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100 (4 nodes × 8): nlp owns it; vision may borrow 16.
  ({ qm, controllers } = await startWorkloadSuite('wl-ray', ['kuberay'], 4, 16));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

const ofCluster = (name: string): string => `ray.io/cluster=${name}`;

function sample(): Manifest {
  return examples.rayClusterSample(controllers).find((o) => o.kind === 'RayCluster')!;
}

/** The sample as a team runs it on GPUs: 8 h100 GPUs a pod; `workers` replicas of at least `minWorkers`. */
function gpuCluster(name: string, team: string, workers: number, minWorkers: number, priorityClass?: string): Manifest {
  const cluster = forTeam(sample(), {
    team,
    name,
    schedulerName: 'quartermaster',
    limits: { 'nvidia.com/gpu': '8' },
    ...(priorityClass === undefined ? {} : { priorityClass }),
  });
  cluster.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  Object.assign(cluster.spec.workerGroupSpecs[0], { replicas: workers, minReplicas: minWorkers });
  return cluster;
}

async function deleteCluster(name: string): Promise<void> {
  await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
    group: 'ray.io',
    version: 'v1',
    plural: 'rayclusters',
    namespace: qm.namespace,
    name,
  });
}

describe('RayCluster', () => {
  it('the upstream sample with the team label is one job of head + worker, bound where the core placed them', async () => {
    const manifest = await applyManifest(qm, forTeam(sample(), { team: 'vision', schedulerName: 'quartermaster' }));
    const job = await workloadJob(qm, 'RayCluster', 'raycluster-kuberay', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    expect(job).toMatchObject({
      kind: 'serving', // a RayCluster serves until deleted: never ending in estimates
      replicas: 2,
      minReplicas: 2,
      acceleratorsPerReplica: 0,
      workload: { apiVersion: 'ray.io/v1', kind: 'RayCluster', name: 'raycluster-kuberay', uid: manifest.metadata!.uid },
    });
    const pods = await eventually('2 pods bound', async () => {
      const bound = await boundPods(qm, job.id);
      return bound.length === 2 ? bound : undefined;
    });
    expect(pods.map((p) => p.metadata!.labels!['ray.io/node-type']).sort()).toEqual(['head', 'worker']);
    const allocation = new Map(job.allocation!.map((a) => [String(a.replica), a.node]));
    for (const pod of pods) expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    // A RayCluster runs until deleted: deleting it ends the job.
    await deleteCluster('raycluster-kuberay');
    await workloadJob(qm, 'RayCluster', 'raycluster-kuberay', (j) => j.state === 'CANCELLED');
  }, 180_000);

  it('elastic workers: within quota the gang starts with the head and the minimum; the workers above wait and say why; a second cluster waits for quota', async () => {
    // Head + 3 workers (at least 1) × 8 GPUs against vision's 16: admitted with 2 of 4.
    await applyManifest(qm, gpuCluster('vision-a', 'vision', 3, 1));
    const a = await workloadJob(qm, 'RayCluster', 'vision-a', (j) => j.state === 'BINDING' || j.state === 'RUNNING').catch(async (e: unknown) => {
      throw new Error(`${String(e)} JOBS ${JSON.stringify(await qm.ok('GET', '/v1/jobs?limit=50'))} TEAM ${JSON.stringify(await qm.ok('GET', '/v1/teams/vision'))}`);
    });
    expect(a).toMatchObject({ replicas: 4, minReplicas: 2, acceleratorsPerReplica: 8, admittedReplicas: 2 });
    const bound = await eventually('head + 1 worker of vision-a bound', async () => {
      const list = await boundPods(qm, a.id);
      return list.length === 2 ? list : undefined;
    });
    expect(bound.map((p) => p.metadata!.labels!['ray.io/node-type']).sort()).toEqual(['head', 'worker']);
    const extra = await eventually('the 2 workers above the admission say why they wait', async () => {
      const list = (await podsOf(qm, ofCluster('vision-a'))).filter((p) => live(p) && !p.spec?.nodeName);
      return list.length === 2 && list.every((p) => scheduledCondition(p)?.reason === 'ElasticReplicaNotAdmitted') ? list : undefined;
    });
    expect(scheduledCondition(extra[0]!)!.message).toMatch(/admitted with 2 of 4 replicas/);
    expect(await used(qm, 'vision', 'h100')).toBe(16);

    // The upstream shape (head + 1 worker, both required) does not fit vision's remaining quota: it waits.
    await applyManifest(qm, gpuCluster('vision-b', 'vision', 1, 1));
    const b = await workloadJob(qm, 'RayCluster', 'vision-b', (j) => j.state === 'PENDING' && j.pending?.code === 'QUOTA_EXCEEDED');
    expect(b.pending!.message).toMatch(/vision/);
    const pods = await eventually('vision-b pods show the reason', async () => {
      const list = await podsOf(qm, ofCluster('vision-b'));
      return list.length === 2 && list.every((p) => scheduledCondition(p)?.reason === 'QuotaExceeded') ? list : undefined;
    });
    expect(pods.every((p) => !p.spec?.nodeName)).toBe(true);
    await eventually('a QuotaExceeded Event on the RayCluster', async () =>
      (await eventsOn(qm, 'RayCluster', 'vision-b')).some((e) => e.reason === 'QuotaExceeded') ? true : undefined,
    );
    await deleteCluster('vision-b');
    await workloadJob(qm, 'RayCluster', 'vision-b', (j) => j.state === 'CANCELLED');
  }, 180_000);

  it('a team within nominal reclaims by evicting a borrowing cluster; KubeRay recreates it and it waits as the same job; deleting the preemptor releases quota', async () => {
    const kubelet = runKubelet(qm);
    try {
      const before = await workloadJob(qm, 'RayCluster', 'vision-a', (j) => j.state === 'RUNNING', 60_000);
      // nlp: head + 3 workers, all required: 32 GPUs, so vision's borrowed 16 go.
      await applyManifest(qm, gpuCluster('nlp-c', 'nlp', 3, 3, 'high'));
      const c = await workloadJob(qm, 'RayCluster', 'nlp-c', (j) => j.state === 'RUNNING', 120_000);
      expect(await boundPods(qm, c.id)).toHaveLength(4);

      const a = await workloadJob(qm, 'RayCluster', 'vision-a', (j) => j.state === 'PENDING' && j.preemptionCount === 1);
      expect(a.id).toBe(before.id);
      // KubeRay recreated the evicted head and workers; they wait, unbound, as the same job's pods.
      await eventually('vision-a recreated and waiting', async () => {
        const list = (await podsOf(qm, ofCluster('vision-a'))).filter(live);
        return list.length === 4 && list.every((p) => !p.spec?.nodeName && p.metadata?.labels?.['quartermaster.io/job-id'] === a.id) ? true : undefined;
      }, 90_000);
      const preempted = (await eventually('vision-a has a Preempted Event', async () => (await eventsOn(qm, 'RayCluster', 'vision-a')).find((e) => e.reason === 'Preempted')));
      expect(preempted).toMatchObject({ type: 'Warning', message: expect.stringContaining('evicts every pod of the gang') });
      expect(await used(qm, 'vision', 'h100')).toBe(0);

      await deleteCluster('nlp-c');
      await workloadJob(qm, 'RayCluster', 'nlp-c', (j) => j.state === 'CANCELLED');
      expect(await used(qm, 'nlp', 'h100')).toBe(0);
      const back = await workloadJob(qm, 'RayCluster', 'vision-a', (j) => j.state === 'RUNNING', 90_000);
      expect(back.id).toBe(before.id);
      expect(await boundPods(qm, back.id)).toHaveLength(2);
      expect(await used(qm, 'vision', 'h100')).toBe(16);
    } finally {
      await kubelet.stop();
    }
  }, 300_000);
});
