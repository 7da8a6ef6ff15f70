// RayJobs gang-scheduled by Quartermaster, with the real KubeRay operator (v1.5.0) and the Job controller (its
// submitter Job): the upstream sample plus the team label is one job of the cluster it creates (head +
// worker), bound where the core placed them. Preemption speaks KubeRay's language: a RayJob with
// shutdownAfterJobFinishes is suspended (the operator deletes its cluster and resumes with a new one); one
// without — the upstream sample — would be failed for good by KubeRay if suspended (ValidationFailed), and
// KubeRay never recreates the head pod of a RayJob's cluster, so its RayCluster is deleted instead: the
// operator creates it anew and its pods wait. Either comes back as the same job. The RayJob's
// jobDeploymentStatus ends the job and releases its quota (here Failed: no Ray runtime answers the submitter).
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
  // h100 (4 nodes × 8): nlp owns it; vision may borrow all of it.
  ({ qm, controllers } = await startWorkloadSuite('wl-rayjob', ['kuberay'], 4, 32));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

const custom = (): CustomObjectsApi => qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi);

/** The sample's RayJob and ConfigMap, the RayJob as `team` submits it (GPUs: 8 h100 a pod, head + 1 worker). */
function rayJob(name: string, team: string, options: { gpus?: boolean; priorityClass?: string; shutdownAfterJobFinishes?: boolean } = {}): Manifest[] {
  const objects = examples.rayJobSample(controllers);
  // The sample's code ConfigMap is created once (with the first RayJob); the others mount the same one.
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap' && name === 'rayjob-sample');
  const manifest = forTeam(objects.find((o) => o.kind === 'RayJob')!, {
    team,
    name,
    schedulerName: 'quartermaster',
    ...(options.gpus ? { limits: { 'nvidia.com/gpu': '8' } } : {}),
    ...(options.priorityClass === undefined ? {} : { priorityClass: options.priorityClass }),
  });
  if (options.gpus) manifest.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  if (options.shutdownAfterJobFinishes) manifest.spec.shutdownAfterJobFinishes = true;
  return [...configMaps, manifest];
}

async function readRayJob(name: string): Promise<Manifest & { status?: Record<string, unknown> }> {
  return (await custom().getNamespacedCustomObject({ group: 'ray.io', version: 'v1', plural: 'rayjobs', namespace: qm.namespace, name })) as Manifest;
}

/** Pods of the cluster a RayJob created (its name is the RayJob's plus a suffix). */
async function clusterPods(rayJobName: string) {
  return (await podsOf(qm, 'ray.io/node-type')).filter((p) => p.metadata!.labels!['ray.io/cluster']?.startsWith(`${rayJobName}-`));
}

/** Plays the kubelet for a RayJob's submitter Job: its pod Succeeded (KubeRay then ends the RayJob; here Failed, no Ray runtime answers). */
async function finishSubmitter(rayJobName: string): Promise<void> {
  const submitter = await eventually(`${rayJobName}’s submitter pod`, async () => (await podsOf(qm, `job-name=${rayJobName}`))[0], 90_000);
  await qm.cluster.patchPodStatus(
    submitter.metadata!.name!,
    {
      phase: 'Succeeded',
      containerStatuses: (submitter.spec?.containers ?? []).map((ct) => ({
        name: ct.name,
        image: ct.image ?? '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: new Date(), finishedAt: new Date() } },
      })),
    },
    qm.namespace,
  );
}

describe('RayJob', () => {
  it('the upstream sample with the team label is one job of its cluster (head + worker), bound where the core placed them', async () => {
    let manifest: Manifest | undefined;
    for (const object of rayJob('rayjob-sample', 'vision')) {
      const created = await applyManifest(qm, object);
      if (created.kind === 'RayJob') manifest = created;
    }
    const job = await workloadJob(qm, 'RayJob', 'rayjob-sample', (j) => j.state === 'BINDING' || j.state === 'RUNNING', 90_000);
    expect(job).toMatchObject({
      kind: 'training',
      replicas: 2,
      minReplicas: 2,
      workload: { apiVersion: 'ray.io/v1', kind: 'RayJob', name: 'rayjob-sample', uid: manifest!.metadata!.uid },
    });
    const pods = await eventually('head + worker bound', async () => {
      const bound = await boundPods(qm, job.id);
      return bound.length === 2 ? bound : undefined;
    });
    expect(pods.map((p) => p.metadata!.labels!['ray.io/node-type']).sort()).toEqual(['head', 'worker']);
    const allocation = new Map(job.allocation!.map((a) => [String(a.replica), a.node]));
    for (const pod of pods) expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    await custom().deleteNamespacedCustomObject({ group: 'ray.io', version: 'v1', plural: 'rayjobs', namespace: qm.namespace, name: 'rayjob-sample' });
    await workloadJob(qm, 'RayJob', 'rayjob-sample', (j) => j.state === 'CANCELLED');
  }, 180_000);

  it('a finished RayJob whose RayCluster is kept (the sample: no shutdownAfterJobFinishes) keeps its quota while the cluster holds the GPUs, says so on the RayJob, and ends once the cluster is deleted', async () => {
    const kubelet = runKubelet(qm);
    try {
      for (const object of rayJob('vision-kept', 'vision', { gpus: true })) await applyManifest(qm, object);
      const running = await workloadJob(qm, 'RayJob', 'vision-kept', (j) => j.state === 'RUNNING', 90_000);
      await eventually('vision holds 16 h100', async () => ((await used(qm, 'vision', 'h100')) === 16 ? true : undefined));

      await finishSubmitter('vision-kept');
      const finished = await eventually('KubeRay ends vision-kept', async () => {
        const status = (await readRayJob('vision-kept')).status;
        return status?.jobDeploymentStatus === 'Failed' || status?.jobDeploymentStatus === 'Complete' ? status : undefined;
      }, 120_000);
      // KubeRay keeps the cluster: its pods still hold 16 GPUs, so the job still holds them, and the RayJob says why.
      const event = await eventually('a FinishedWorkloadKeepsPods Event on vision-kept', async () =>
        (await eventsOn(qm, 'RayJob', 'vision-kept')).find((e) => e.reason === 'FinishedWorkloadKeepsPods'),
      90_000);
      expect(event).toMatchObject({ type: 'Warning', message: expect.stringContaining(`RayCluster ${qm.namespace}/${String(finished.rayClusterName)} is kept`) });
      expect((await clusterPods('vision-kept')).filter((p) => live(p) && p.spec?.nodeName)).toHaveLength(2);
      expect(await workloadJob(qm, 'RayJob', 'vision-kept')).toMatchObject({ id: running.id, state: 'RUNNING' });
      expect(await used(qm, 'vision', 'h100')).toBe(16);

      // Deleting the cluster ends the job with the RayJob's verdict and releases the quota.
      await custom().deleteNamespacedCustomObject({ group: 'ray.io', version: 'v1', plural: 'rayclusters', namespace: qm.namespace, name: String(finished.rayClusterName) });
      const ended = await workloadJob(qm, 'RayJob', 'vision-kept', (j) => j.state === 'FAILED' || j.state === 'SUCCEEDED', 120_000);
      expect(ended.id).toBe(running.id);
      await eventually('vision’s quota released', async () => ((await used(qm, 'vision', 'h100')) === 0 ? true : undefined));
      await custom().deleteNamespacedCustomObject({ group: 'ray.io', version: 'v1', plural: 'rayjobs', namespace: qm.namespace, name: 'vision-kept' });
    } finally {
      await kubelet.stop();
    }
  }, 420_000);

  it('a team within nominal reclaims: a RayJob with shutdownAfterJobFinishes is suspended, the upstream sample has its pods evicted; both come back as the same jobs once the preemptor ends', async () => {
    const kubelet = runKubelet(qm);
    try {
      for (const object of rayJob('vision-suspend', 'vision', { gpus: true, shutdownAfterJobFinishes: true })) await applyManifest(qm, object);
      for (const object of rayJob('vision-evict', 'vision', { gpus: true })) await applyManifest(qm, object);
      const suspendBefore = await workloadJob(qm, 'RayJob', 'vision-suspend', (j) => j.state === 'RUNNING', 90_000);
      const evictBefore = await workloadJob(qm, 'RayJob', 'vision-evict', (j) => j.state === 'RUNNING', 90_000);
      expect(await used(qm, 'vision', 'h100')).toBe(32);

      // nlp: head + 3 workers, all required, 32 GPUs: both of vision's borrowed RayJobs go.
      // (With shutdownAfterJobFinishes, as batch RayJobs are run: KubeRay deletes its cluster once it finished.)
      const [nlpJob] = rayJob('nlp-c', 'nlp', { gpus: true, priorityClass: 'high', shutdownAfterJobFinishes: true });
      Object.assign(nlpJob!.spec.rayClusterSpec.workerGroupSpecs[0], { replicas: 3, minReplicas: 3 });
      await applyManifest(qm, nlpJob!);
      const c = await workloadJob(qm, 'RayJob', 'nlp-c', (j) => j.state === 'RUNNING', 120_000);
      expect(await boundPods(qm, c.id)).toHaveLength(4);

      // Suspended: KubeRay deleted its cluster; the RayJob waits, suspended by Quartermaster, as the same job.
      const suspended = await workloadJob(qm, 'RayJob', 'vision-suspend', (j) => j.state === 'PENDING' && j.preemptionCount === 1);
      expect(suspended.id).toBe(suspendBefore.id);
      expect((await readRayJob('vision-suspend')).spec.suspend).toBe(true);
      await eventually('vision-suspend’s cluster gone', async () => ((await clusterPods('vision-suspend')).filter(live).length === 0 ? true : undefined), 90_000);
      expect((await eventually('vision-suspend has a Preempted Event', async () => (await eventsOn(qm, 'RayJob', 'vision-suspend')).find((e) => e.reason === 'Preempted')))?.message).toContain('suspends it');

      // Never suspended (KubeRay would fail it): its cluster was deleted, KubeRay made a new one whose pods wait for the same job.
      const evicted = await workloadJob(qm, 'RayJob', 'vision-evict', (j) => j.state === 'PENDING' && j.preemptionCount === 1);
      expect(evicted.id).toBe(evictBefore.id);
      const sample = await readRayJob('vision-evict');
      expect(sample.spec.suspend ?? false).toBe(false);
      expect(sample.status?.jobDeploymentStatus).not.toBe('ValidationFailed');
      expect((await eventually('vision-evict has a Preempted Event', async () => (await eventsOn(qm, 'RayJob', 'vision-evict')).find((e) => e.reason === 'Preempted')))?.message).toContain('deletes its cluster');
      const waiting = await eventually('vision-evict’s pods recreated, waiting with their reason', async () => {
        const list = (await clusterPods('vision-evict')).filter(live);
        return list.length === 2 && list.every((p) => !p.spec?.nodeName && p.metadata?.labels?.['quartermaster.io/job-id'] === evicted.id && scheduledCondition(p)?.status === 'False')
          ? list
          : undefined;
      }, 90_000).catch(async (error: unknown) => {
        const pods = (await clusterPods('vision-evict')).map((p) => ({ name: p.metadata?.name, node: p.spec?.nodeName, deleting: !!p.metadata?.deletionTimestamp, phase: p.status?.phase, job: p.metadata?.labels?.['quartermaster.io/job-id'], condition: scheduledCondition(p) }));
        throw new Error(`${String(error)}; pods: ${JSON.stringify(pods)}; RayJob status: ${JSON.stringify((await readRayJob('vision-evict')).status)}`);
      });
      // Why it waits: the job's pending reason (its team borrows, the cohort's capacity is nlp's now).
      expect(scheduledCondition(waiting[0]!)!.reason).toMatch(/^(QuotaExceeded|CohortExhausted|Queued|InsufficientCapacity)$/);
      expect(await used(qm, 'vision', 'h100')).toBe(0);

      // nlp-c ends as KubeRay says: its submitter Job finishes (no Ray runtime answers here, so KubeRay marks
      // the RayJob Failed once its grace period passes); nlp's quota is released and vision's RayJobs return.
      await finishSubmitter('nlp-c');
      const ended = await workloadJob(qm, 'RayJob', 'nlp-c', (j) => j.state === 'FAILED', 120_000);
      expect(ended.id).toBe(c.id);
      expect(await used(qm, 'nlp', 'h100')).toBe(0);
      await eventually('nlp-c’s cluster deleted by KubeRay', async () => ((await clusterPods('nlp-c')).filter(live).length === 0 ? true : undefined), 90_000);

      const backSuspended = await workloadJob(qm, 'RayJob', 'vision-suspend', (j) => j.state === 'RUNNING', 120_000);
      expect(backSuspended.id).toBe(suspendBefore.id);
      expect((await readRayJob('vision-suspend')).spec.suspend).toBe(false);
      const backEvicted = await workloadJob(qm, 'RayJob', 'vision-evict', (j) => j.state === 'RUNNING', 120_000);
      expect(backEvicted.id).toBe(evictBefore.id);
      expect(await used(qm, 'vision', 'h100')).toBe(32);
    } finally {
      await kubelet.stop();
    }
  }, 420_000);
});
