// JobSets gang-scheduled by Quartermaster, with the real JobSet controller (v0.10.1, its mutating webhook) and
// the Job controller: the upstream paralleljobs example (4 workers + 1 driver) plus the team label is one job
// of 5 pods; with 4 GPUs a pod it is admitted whole within quota and a second one waits with its reason on its
// pods and the JobSet; a team within its nominal quota reclaims by suspending a borrowing team's JobSet (the
// JobSet controller suspends its Jobs, whose pods go), which comes back as the same job; the JobSet's
// Completed condition ends the job and releases its quota — read from a watch of JobSets, never by a GET of one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import { KubeCluster } from '#kube';
import { KubeJobStore } from '../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { WorkloadStatusSync } from '../../apps/scheduler/src/kubernetes/workload-status-sync.js';
import { restrictedIdentity } from './support/restricted-identity.js';
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
  succeed,
  used,
  workloadJob,
  teamPriorityClass,
} from './support/workloads.js';
import { replicaOfPod } from '#kube';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100 (4 nodes × 8): nlp owns it, vision may borrow all of it.
  ({ qm, controllers } = await startWorkloadSuite('wl-jobset', ['jobset'], 4, 32));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

/** paralleljobs as a team runs it on GPUs: 5 pods of 4 h100 GPUs each (20 of the 32). */
function gpuJobSet(name: string, team: string, priorityClass?: string): Manifest {
  const jobSet = forTeam(examples.parallelJobs(), {
    team,
    name,
    schedulerName: 'quartermaster',
    limits: { 'nvidia.com/gpu': '4' },
    ...(priorityClass === undefined ? {} : { priorityClass }),
  });
  jobSet.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  return jobSet;
}

async function readJobSet(name: string): Promise<Manifest> {
  return (await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'jobset.x-k8s.io',
    version: 'v1alpha2',
    plural: 'jobsets',
    namespace: qm.namespace,
    name,
  })) as Manifest;
}

const ofJobSet = (name: string): string => `jobset.sigs.k8s.io/jobset-name=${name}`;

/** A KubeConfig that may list and watch JobSets, and nothing else: any GET of a JobSet is refused (403). */
const listAndWatchJobSetsOnly = (): ReturnType<typeof restrictedIdentity> =>
  restrictedIdentity(qm.cluster.kubeConfig, 'qm-watch-jobsets', [{ apiGroups: ['jobset.x-k8s.io'], resources: ['jobsets'], verbs: ['list', 'watch'] }]);

describe('JobSet', () => {
  it('the upstream paralleljobs JobSet with the team label is one job of 5 pods, bound where the core placed them', async () => {
    const manifest = await applyManifest(
      qm,
      forTeam(examples.parallelJobs(), { team: 'vision', schedulerName: 'quartermaster' }),
    );
    const job = await workloadJob(
      qm,
      'JobSet',
      'paralleljobs',
      (j) => j.state === 'BINDING' || j.state === 'RUNNING',
    );
    expect(job).toMatchObject({
      replicas: 5,
      minReplicas: 5,
      acceleratorsPerReplica: 0,
      workload: {
        apiVersion: 'jobset.x-k8s.io/v1alpha2',
        kind: 'JobSet',
        name: 'paralleljobs',
        uid: manifest.metadata!.uid,
      },
    });
    const pods = await eventually('5 pods bound', async () => {
      const bound = await boundPods(qm, job.id);
      return bound.length === 5 ? bound : undefined;
    });
    const allocation = new Map(job.allocation!.map((a) => [String(a.replica), a.node]));
    for (const pod of pods)
      expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    const roles = pods.map((p) => p.metadata!.labels!['jobset.sigs.k8s.io/replicatedjob-name']).sort();
    expect(roles).toEqual(['driver', 'workers', 'workers', 'workers', 'workers']);
  }, 180_000);

  it('GPU JobSets: admitted whole within quota; a second waits for quota with its reason, none of its pods bound', async () => {
    await applyManifest(qm, gpuJobSet('vision-a', 'vision'));
    const a = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    expect(a).toMatchObject({ replicas: 5, acceleratorsPerReplica: 4, admittedReplicas: 5 });
    await eventually('5 pods of vision-a bound', async () =>
      (await boundPods(qm, a.id)).length === 5 ? true : undefined,
    );

    // 20 more GPUs would take vision to 40, over its 32 of borrowing.
    await applyManifest(qm, gpuJobSet('vision-b', 'vision'));
    const b = await workloadJob(
      qm,
      'JobSet',
      'vision-b',
      (j) => j.state === 'PENDING' && j.pending?.code === 'QUOTA_EXCEEDED',
    );
    expect(b.pending!.message).toMatch(/vision/);
    const pods = await eventually('vision-b pods show the reason', async () => {
      const list = await podsOf(qm, ofJobSet('vision-b'));
      return list.length === 5 && list.every((p) => scheduledCondition(p)?.reason === 'QuotaExceeded')
        ? list
        : undefined;
    });
    expect(pods.every((p) => !p.spec?.nodeName)).toBe(true);
    expect(scheduledCondition(pods[0]!)).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/^QUOTA_EXCEEDED: .*vision/),
    });
    const events = await eventually('a QuotaExceeded Event on the JobSet', async () => {
      const list = await eventsOn(qm, 'JobSet', 'vision-b');
      return list.some((e) => e.reason === 'QuotaExceeded') ? list : undefined;
    });
    expect(events.filter((e) => e.reason === 'QuotaExceeded')).toHaveLength(1);
    await eventually('vision-a has an Admitted Event', async () => ((await eventsOn(qm, 'JobSet', 'vision-a')).some((e) => e.reason === 'Admitted') ? true : undefined));
    // Nothing left to wait for: vision-b goes, its job CANCELLED with it.
    await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'jobset.x-k8s.io',
      version: 'v1alpha2',
      plural: 'jobsets',
      namespace: qm.namespace,
      name: 'vision-b',
    });
    await workloadJob(qm, 'JobSet', 'vision-b', (j) => j.state === 'CANCELLED');
  }, 180_000);

  it('a team within nominal reclaims by suspending the borrowing JobSet; it returns as the same job; completion releases quota', async () => {
    const kubelet = runKubelet(qm);
    try {
      const before = await workloadJob(qm, 'JobSet', 'vision-a');
      // nlp's 20 GPUs fit only if vision's borrowed 20 go (12 are free).
      await applyManifest(qm, gpuJobSet('nlp-c', 'nlp', 'high'));
      const c = await workloadJob(qm, 'JobSet', 'nlp-c', (j) => j.state === 'RUNNING', 90_000);
      expect(await boundPods(qm, c.id)).toHaveLength(5);

      // vision-a was suspended (the JobSet controller suspended its Jobs, their pods went) and waits as the same job.
      const a = await workloadJob(
        qm,
        'JobSet',
        'vision-a',
        (j) => j.state === 'PENDING' && j.preemptionCount === 1,
      );
      expect(a.id).toBe(before.id);
      expect((await readJobSet('vision-a')).spec.suspend).toBe(true);
      await eventually('the pods of vision-a are gone', async () =>
        (await podsOf(qm, ofJobSet('vision-a'))).filter(live).length === 0 ? true : undefined,
      );
      const preempted = (await eventually('vision-a has a Preempted Event', async () => (await eventsOn(qm, 'JobSet', 'vision-a')).find((e) => e.reason === 'Preempted')));
      expect(preempted).toMatchObject({ type: 'Warning', message: expect.stringContaining('suspends it') });

      // nlp-c completes: its Jobs complete, the JobSet says Completed, the job SUCCEEDED and nlp's quota is free.
      await succeed(qm, await boundPods(qm, c.id));
      await workloadJob(qm, 'JobSet', 'nlp-c', (j) => j.state === 'SUCCEEDED', 90_000);
      expect(((await readJobSet('nlp-c')) as Manifest & { status: { conditions: unknown[] } }).status.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'Completed', status: 'True' })]),
      );
      expect(await used(qm, 'nlp', 'h100')).toBe(0);

      // Capacity is back: vision-a is resumed by Quartermaster, its new pods bound, the same job RUNNING.
      const back = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'RUNNING', 90_000);
      expect(back.id).toBe(before.id);
      expect((await readJobSet('vision-a')).spec.suspend).toBe(false);
      expect(await boundPods(qm, back.id)).toHaveLength(5);
      // (Eventually: the usage the API reports is the last committed cycle's.)
      await eventually('vision uses the 20 h100 of vision-a', async () => ((await used(qm, 'vision', 'h100')) === 20 ? true : undefined)).catch(async (e: unknown) => {
        throw new Error(`${String(e)}: jobs ${JSON.stringify(((await qm.ok('GET', '/v1/jobs?limit=50')) as { items: { name: string; state: string; admittedReplicas: number | null; flavor: string | null }[] }).items.map((j) => [j.name, j.state, j.admittedReplicas, j.flavor]))}`);
      });
    } finally {
      await kubelet.stop();
    }
  }, 300_000);

  it("a JobSet's completion ends its job from the watch of JobSets alone, with no GET of the JobSet", async () => {
    // vision-a runs (the test before). Only a status sync that may list and watch JobSets, but not get one,
    // is left to end it: the polling sync read each JobSet by a GET every pass, which this identity is refused.
    const running = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'RUNNING');
    await qm.watchers.workloadStatus.stop();
    const identity = await listAndWatchJobSetsOnly();
    const database = qm.api.database;
    const sync = new WorkloadStatusSync(
      new KubeCluster(identity.kubeConfig, { namespace: qm.namespace }),
      database,
      new KubeJobStore(database),
      100,
      () => undefined,
      pino({ level: 'silent' }),
    );
    // The identity really cannot read a JobSet.
    await expect(
      identity.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        group: 'jobset.x-k8s.io',
        version: 'v1alpha2',
        plural: 'jobsets',
        namespace: qm.namespace,
        name: 'vision-a',
      }),
    ).rejects.toMatchObject({ code: 403 });
    sync.start();
    try {
      await succeed(qm, await boundPods(qm, running.id));
      const done = await workloadJob(qm, 'JobSet', 'vision-a', (j) => j.state === 'SUCCEEDED', 90_000);
      expect(done.id).toBe(running.id);
      await eventually('vision uses no h100', async () => ((await used(qm, 'vision', 'h100')) === 0 ? true : undefined));
    } finally {
      await sync.stop();
      await identity.cleanUp();
    }
  }, 180_000);
});
