// The same workload gangs with kube-scheduler in charge (deploy/kube-scheduler/config.yaml, Quartermaster as
// its extender) and the real JobSet controller and Kubeflow Trainer: the pods keep the default scheduler, ask
// for GPUs, and the JobSet or TrainJob carries only the team label (a TrainJob cannot name a scheduler for its
// pods: its runtime's template does, so kube-scheduler with the extender is how TrainJobs are gang-scheduled
// unless the platform's runtimes name Quartermaster's scheduler). Quartermaster groups them by their JobSet and lets kube-scheduler bind
// none of them until the whole gang is admitted within quota — then each only to the node its replica was
// allocated. A JobSet over quota gets no pod bound; a team within nominal reclaims by suspending a
// borrowing JobSet; completion releases the quota and the preempted JobSet returns as the same job.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam, type Manifest } from './controllers/examples.js';
import { readRepoFile, startKubeScheduler, type RunningKubeScheduler } from './support/kube-scheduler.js';
import { eventually, type QmEnv } from './scheduler-harness.js';
import {
  applyManifest,
  deleteManifest,
  startWorkloadSuite,
  stopWorkloadSuite,
  boundPods,
  eventsOn,
  live,
  podsOf,
  runKubelet,
  succeed,
  used,
  workloadJob,
  teamPriorityClass,
} from './support/workloads.js';
import { KubeCluster, LABEL_JOB_ID, replicaOfPod } from '#kube';
import { unimportedWorkloadPodCheck } from '../../apps/scheduler/src/kubernetes/workload-importer.js';
import { WorkloadViews } from '../../apps/scheduler/src/kubernetes/workload-views.js';
import { restrictedIdentity } from './support/restricted-identity.js';

let controllers: RunningControllers;
let qm: QmEnv;
let kubeScheduler: RunningKubeScheduler;

beforeAll(async () => {
  ({ qm, controllers } = await startWorkloadSuite('wl-ext', ['jobset', 'trainer'], 4, 32, { extender: true }));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
  // a100 (4 × 8) for the TrainJobs: the same split.
  await qm.ok('PUT', '/v1/teams/vision/quotas/a100', { nominal: 0, borrowingLimit: 32, lendingLimit: null });
  await qm.ok('PUT', '/v1/teams/nlp/quotas/a100', { nominal: 32, borrowingLimit: 0, lendingLimit: null });
  await eventually('8 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
  kubeScheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
    const [extender] = config.extenders as Record<string, unknown>[];
    extender!.urlPrefix = `${qm.schedulerUrl}/extender`;
  });
}, 30 * 60_000);

afterAll(async () => {
  await kubeScheduler?.stop();
  await stopWorkloadSuite({ qm, controllers });
}, 120_000);

/** paralleljobs with the team label and 4 h100 GPUs a pod (20 in all); the pods keep the default scheduler. */
function gpuJobSet(name: string, team: string, priorityClass?: string): Manifest {
  const jobSet = forTeam(examples.parallelJobs(), {
    team,
    name,
    limits: { 'nvidia.com/gpu': '4' },
    ...(priorityClass === undefined ? {} : { priorityClass }),
  });
  jobSet.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  return jobSet;
}

const ofJobSet = (name: string): string => `jobset.sigs.k8s.io/jobset-name=${name}`;

async function readJobSet(name: string): Promise<Manifest> {
  return (await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'jobset.x-k8s.io',
    version: 'v1alpha2',
    plural: 'jobsets',
    namespace: qm.namespace,
    name,
  })) as Manifest;
}

describe('JobSet through kube-scheduler with Quartermaster as extender', () => {
  it('kube-scheduler binds the JobSet’s pods only once the gang is admitted, each to its replica’s node; one over quota gets none', async () => {
    await applyManifest(qm, gpuJobSet('vision-a', 'vision'));
    const a = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'BINDING' || j.state === 'RUNNING', 90_000);
    expect(a).toMatchObject({ replicas: 5, acceleratorsPerReplica: 4 });
    const pods = await eventually('kube-scheduler bound the 5 pods', async () => {
      const bound = await boundPods(qm, a.id);
      return bound.length === 5 ? bound : undefined;
    }, 90_000);
    const job = (await qm.ok('GET', `/v1/jobs/${a.id}`)) as typeof a;
    const allocation = new Map(job.allocation!.map((x) => [String(x.replica), x.node]));
    for (const pod of pods) {
      expect(pod.spec?.schedulerName).toBe('default-scheduler');
      expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    }
    // kube-scheduler asked Quartermaster about them before the gang was imported and admitted.
    expect(kubeScheduler.logs()).toMatch(/Quartermaster: (workload gang not imported yet|gang \S+ is not admitted)/);

    // Over quota: vision would use 40 of its 32. kube-scheduler binds none of its pods.
    await applyManifest(qm, gpuJobSet('vision-b', 'vision'));
    const b = await workloadJob(qm, 'JobSet', 'vision-b', (j) => j.state === 'PENDING' && j.pending?.code === 'QUOTA_EXCEEDED', 90_000);
    expect(b.pending!.message).toMatch(/vision/);
    await eventually('a QuotaExceeded Event on vision-b', async () =>
      (await eventsOn(qm, 'JobSet', 'vision-b')).some((e) => e.reason === 'QuotaExceeded') ? true : undefined,
    );
    // kube-scheduler keeps the pods' condition its own; Quartermaster tells each waiting pod why with an Event
    // (its gang's pending reason) — every pod, also one the Job controller made after the reason was first told.
    // Waited for on the real state: all 5 pods exist, none bound, each with a QuotaExceeded Event naming vision.
    await eventually('each of vision-b’s 5 pods says why it waits', async () => {
      const waiting = await podsOf(qm, ofJobSet('vision-b'));
      if (waiting.length !== 5 || waiting.some((p) => p.spec?.nodeName)) return undefined;
      for (const pod of waiting) {
        const events = await eventsOn(qm, 'Pod', pod.metadata!.name!);
        if (!events.some((e) => e.reason === 'QuotaExceeded' && /QUOTA_EXCEEDED: .*vision/.test(e.message))) return undefined;
      }
      return true;
    }, 90_000);
    expect((await podsOf(qm, ofJobSet('vision-b'))).filter((p) => p.spec?.nodeName)).toHaveLength(0);
    await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'jobset.x-k8s.io',
      version: 'v1alpha2',
      plural: 'jobsets',
      namespace: qm.namespace,
      name: 'vision-b',
    });
    await workloadJob(qm, 'JobSet', 'vision-b', (j) => j.state === 'CANCELLED');
  }, 240_000);

  it('a team within nominal reclaims by suspending the borrowing JobSet; completion releases the quota and it returns as the same job', async () => {
    const kubelet = runKubelet(qm);
    try {
      const before = await workloadJob(qm, 'JobSet', 'vision-a');
      // nlp's 20 h100 GPUs fit only if vision's borrowed 20 go.
      await applyManifest(qm, gpuJobSet('nlp-c', 'nlp', 'high'));
      const c = await workloadJob(qm, 'JobSet', 'nlp-c', (j) => j.state === 'RUNNING', 120_000);
      expect(await boundPods(qm, c.id)).toHaveLength(5);
      const a = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.preemptionCount === 1);
      expect(a.id).toBe(before.id);
      expect((await readJobSet('vision-a')).spec.suspend).toBe(true);
      // Suspended, the JobSet has no pods; it still says why it waits now (its pending code and reason as an Event),
      // not only that it was preempted.
      await eventually('vision-a says why it waits now', async () => {
        const job = (await qm.ok('GET', `/v1/jobs/${a.id}`)) as { state: string; pending: { code: string | null } | null };
        const code = job.state === 'PENDING' ? job.pending?.code : null;
        if (!code) return undefined;
        const reason = code.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
        const events = await eventsOn(qm, 'JobSet', 'vision-a');
        return events.some((e) => e.reason === reason && e.message.startsWith(`${code}: `)) ? true : undefined;
      });

      await succeed(qm, await boundPods(qm, c.id));
      await workloadJob(qm, 'JobSet', 'nlp-c', (j) => j.state === 'SUCCEEDED', 90_000);
      expect(await used(qm, 'nlp', 'h100')).toBe(0);
      const back = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'RUNNING', 120_000);
      expect(back.id).toBe(before.id);
      expect((await readJobSet('vision-a')).spec.suspend).toBe(false);
      const pods = (await podsOf(qm, ofJobSet('vision-a'))).filter((p) => live(p) && p.spec?.nodeName);
      expect(pods).toHaveLength(5);
      const job = (await qm.ok('GET', `/v1/jobs/${back.id}`)) as typeof back;
      const allocation = new Map(job.allocation!.map((x) => [String(x.replica), x.node]));
      for (const pod of pods) expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    } finally {
      await kubelet.stop();
    }
  }, 300_000);
});

/** The Trainer's getting-started TrainJob with the team label, `numNodes` nodes of 8 a100 GPUs each. */
function gpuTrainJob(name: string, team: string, numNodes: number, priorityClass?: string): Manifest {
  const trainJob = examples.trainJob();
  trainJob.metadata = {
    name,
    labels: { 'quartermaster.io/team': team, ...(priorityClass === undefined ? {} : { 'quartermaster.io/priority-class': priorityClass }) },
    annotations: { 'quartermaster.io/flavors': 'a100' },
  };
  trainJob.spec.trainer = { ...trainJob.spec.trainer, numNodes, resourcesPerNode: { limits: { 'nvidia.com/gpu': '8' } } };
  return trainJob;
}

async function readTrainJob(name: string): Promise<Manifest & { status?: { conditions?: { type: string; status: string }[] } }> {
  return (await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'trainer.kubeflow.org',
    version: 'v1alpha1',
    plural: 'trainjobs',
    namespace: qm.namespace,
    name,
  })) as Manifest;
}

describe('TrainJob through kube-scheduler with Quartermaster as extender', () => {
  it('a TrainJob is one job of numNodes pods bound where the core placed them; a team within nominal reclaims by suspending it; its Complete condition releases the quota and the suspended one returns as the same job', async () => {
    const kubelet = runKubelet(qm);
    try {
      const manifest = await applyManifest(qm, gpuTrainJob('vision-t', 'vision', 2));
      const t = await workloadJob(qm, 'TrainJob', 'vision-t', (j) => j.state === 'RUNNING', 120_000);
      expect(t).toMatchObject({
        replicas: 2,
        acceleratorsPerReplica: 8,
        workload: { apiVersion: 'trainer.kubeflow.org/v1alpha1', kind: 'TrainJob', name: 'vision-t', uid: manifest.metadata!.uid },
      });
      const pods = await boundPods(qm, t.id);
      expect(pods).toHaveLength(2);
      const job = (await qm.ok('GET', `/v1/jobs/${t.id}`)) as typeof t;
      const allocation = new Map(job.allocation!.map((x) => [String(x.replica), x.node]));
      for (const pod of pods) {
        expect(pod.spec?.schedulerName).toBe('default-scheduler');
        expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
      }

      // nlp: 3 nodes × 8 = 24 a100 GPUs; 16 are free, so vision's borrowed TrainJob is suspended.
      await applyManifest(qm, gpuTrainJob('nlp-t', 'nlp', 3, 'high'));
      const n = await workloadJob(qm, 'TrainJob', 'nlp-t', (j) => j.state === 'RUNNING', 120_000);
      expect(await boundPods(qm, n.id)).toHaveLength(3);
      const suspended = await workloadJob(qm, 'TrainJob', 'vision-t', (j) => j.state === 'PENDING' && j.preemptionCount === 1);
      expect(suspended.id).toBe(t.id);
      expect((await readTrainJob('vision-t')).spec.suspend).toBe(true);
      await eventually('vision-t’s pods gone', async () => ((await podsOf(qm, ofJobSet('vision-t'))).filter(live).length === 0 ? true : undefined), 90_000);
      expect((await eventually('vision-t has a Preempted Event', async () => (await eventsOn(qm, 'TrainJob', 'vision-t')).find((e) => e.reason === 'Preempted')))?.message).toContain('suspends it');

      // nlp-t's pods succeed: its JobSet completes, the Trainer marks the TrainJob Complete, the job SUCCEEDED.
      await succeed(qm, await boundPods(qm, n.id));
      await workloadJob(qm, 'TrainJob', 'nlp-t', (j) => j.state === 'SUCCEEDED', 120_000);
      expect((await readTrainJob('nlp-t')).status?.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Complete', status: 'True' })]));
      expect(await used(qm, 'nlp', 'a100')).toBe(0);

      const back = await workloadJob(qm, 'TrainJob', 'vision-t', (j) => j.state === 'RUNNING', 120_000);
      expect(back.id).toBe(t.id);
      expect((await readTrainJob('vision-t')).spec.suspend).toBe(false);
      expect(await boundPods(qm, back.id)).toHaveLength(2);
      expect(await used(qm, 'vision', 'a100')).toBe(16);
    } finally {
      await kubelet.stop();
    }
  }, 420_000);
});

describe("the extender's filter on a pod of a workload not imported yet", () => {
  it('finds the workload through the watches of workload kinds, with no GET of its Job or JobSet', async () => {
    // A JobSet of the team: its pods exist (the JobSet and Job controllers) whatever Quartermaster decides.
    const manifest = gpuJobSet('vision-watched', 'vision');
    await applyManifest(qm, manifest);
    // An extender whose identity may list and watch Jobs and JobSets but not GET one: the check used to read a
    // pod's owners by GETs, and a refused GET let kube-scheduler place the pod alone.
    const identity = await restrictedIdentity(qm.cluster.kubeConfig, 'qm-extender-watch', [
      { apiGroups: ['jobset.x-k8s.io'], resources: ['jobsets'], verbs: ['list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'watch'] },
    ]);
    const cluster = new KubeCluster(identity.kubeConfig, { namespace: qm.namespace });
    const views = new WorkloadViews(cluster, pino({ level: 'silent' }));
    try {
      const pod = await eventually('a pod of vision-watched', async () => (await podsOf(qm, ofJobSet('vision-watched')))[0]);
      // As kube-scheduler asks before the importer labelled it: the pod without its job id.
      const asked = structuredClone(pod);
      delete asked.metadata!.labels![LABEL_JOB_ID];
      await expect(
        identity.kubeConfig.makeApiClient(BatchV1Api).readNamespacedJob({ namespace: qm.namespace, name: pod.metadata!.ownerReferences![0]!.name }),
      ).rejects.toMatchObject({ code: 403 });
      expect(await unimportedWorkloadPodCheck(cluster, views)(asked)).toBe(true);
    } finally {
      await views.stop();
      await identity.cleanUp();
      await deleteManifest(qm, manifest);
    }
  }, 180_000);
});

describe('a JobSet whose Node leaves the cluster, through kube-scheduler with Quartermaster as extender', () => {
  it('is requeued (its workload suspended, its quota released) and comes back as the same job on the nodes that remain', async () => {
    const kubelet = runKubelet(qm);
    try {
      // The h100 nodes to nlp alone: vision's borrowing JobSet of the earlier tests goes.
      await deleteManifest(qm, gpuJobSet('vision-a', 'vision'));
      await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'CANCELLED', 90_000);
      await applyManifest(qm, gpuJobSet('nlp-node-loss', 'nlp'));
      const job = await workloadJob(qm, 'JobSet', 'nlp-node-loss', (j) => j.state === 'RUNNING', 120_000);
      const pods = await boundPods(qm, job.id);
      expect(pods).toHaveLength(5);
      const departed = pods[0]!.spec!.nodeName!;

      // The Node goes (scaled in, or deleted after a hardware fault). Its pods stay bound to it here (no pod GC, no
      // kubelet); on a real cluster the pod GC deletes them and the Job controller's new pods would be pinned
      // there by the filter while the job held its quota.
      await qm.core.deleteNode({ name: departed });
      const requeued = await eventually('nlp-node-loss requeued: its node left', async () => {
        const body = (await qm.ok('GET', `/v1/jobs/${job.id}/events`)) as { items?: { kind: string; message: string }[] } | { kind: string; message: string }[];
        return (Array.isArray(body) ? body : (body.items ?? [])).find((e) => e.kind === 'job.requeued');
      }, 60_000);
      expect(requeued.message).toContain(`node ${departed} left the cluster; gang requeued`);

      // 3 nodes × 8 GPUs remain for its 5 × 4: it runs again, every pod on a node that exists.
      const back = await workloadJob(qm, 'JobSet', 'nlp-node-loss', (j) => j.state === 'RUNNING' && !j.allocation?.some((a) => a.node === departed), 180_000);
      expect(back.id).toBe(job.id);
      expect((await readJobSet('nlp-node-loss')).spec.suspend).toBe(false);
      const again = (await podsOf(qm, ofJobSet('nlp-node-loss'))).filter((p) => live(p) && p.spec?.nodeName);
      expect(again).toHaveLength(5);
      const allocation = new Map(((await qm.ok('GET', `/v1/jobs/${back.id}`)) as typeof back).allocation!.map((x) => [String(x.replica), x.node]));
      for (const pod of again) {
        expect(pod.spec!.nodeName).not.toBe(departed);
        expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
      }
      expect(await used(qm, 'nlp', 'h100')).toBe(20);
    } finally {
      await kubelet.stop();
    }
  }, 420_000);
});
