// LeaderWorkerSets gang-scheduled by Quartermaster, with the real LeaderWorkerSet controller (v0.8.0, its
// webhooks) and the StatefulSet controller: each group of the upstream sample (3 groups of a leader and 3
// workers) plus the team label is one job of 4 pods, bound where the core placed them; with GPUs, groups
// beyond the team's quota wait with the reason on their pods and on the LeaderWorkerSet; a team within its
// nominal quota reclaims by evicting a borrowing team's group (the controller recreates it, and it waits as the
// same job); deleting a LeaderWorkerSet ends its jobs and releases the quota, and the waiting group comes back.
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
  podsOf,
  runKubelet,
  scheduledCondition,
  used,
  workloadJobs,
  type WorkloadJob,
  teamPriorityClass,
} from './support/workloads.js';
import { replicaOfPod } from '#kube';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100 (4 nodes × 8): nlp owns it; vision may borrow 16.
  ({ qm, controllers } = await startWorkloadSuite('wl-lws', ['lws'], 4, 16));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

const GROUP = 'leaderworkerset.sigs.k8s.io/group-index';
const ofLws = (name: string): string => `leaderworkerset.sigs.k8s.io/name=${name}`;

/** The upstream sample as a team runs it on GPUs: 2 h100 GPUs a pod, 8 a group. */
function gpuLws(controllersRunning: RunningControllers, name: string, team: string, priorityClass?: string): Manifest {
  const lws = forTeam(examples.leaderWorkerSetSample(controllersRunning)[0]!, {
    team,
    name,
    schedulerName: 'quartermaster',
    limits: { 'nvidia.com/gpu': '2' },
    ...(priorityClass === undefined ? {} : { priorityClass }),
  });
  lws.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  return lws;
}

/** The jobs of a LeaderWorkerSet's groups, by group index, once there are `n` (each satisfying `where`). */
async function groupJobs(
  name: string,
  n: number,
  where: (job: WorkloadJob) => boolean = () => true,
  timeoutMs?: number,
): Promise<Map<string, WorkloadJob>> {
  return eventually(
    `${n} jobs of LeaderWorkerSet ${name}`,
    async () => {
      const jobs = await Promise.all(
        (await workloadJobs(qm, 'LeaderWorkerSet', name)).map(
          async (j) => (await qm.ok('GET', `/v1/jobs/${j.id}`)) as WorkloadJob & { template: { workloadGroup: string } },
        ),
      );
      return jobs.length === n && jobs.every(where)
        ? new Map(jobs.map((j) => [j.template.workloadGroup, j]))
        : undefined;
    },
    timeoutMs,
  );
}

async function deleteLws(name: string): Promise<void> {
  await qm.cluster.kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
    group: 'leaderworkerset.x-k8s.io',
    version: 'v1',
    plural: 'leaderworkersets',
    namespace: qm.namespace,
    name,
  });
}

describe('LeaderWorkerSet', () => {
  it('each group of the upstream sample with the team label is one job of 4 pods (leader + 3 workers), bound where the core placed them', async () => {
    const [sample] = examples.leaderWorkerSetSample(controllers);
    const manifest = await applyManifest(qm, forTeam(sample!, { team: 'vision', schedulerName: 'quartermaster' }));
    const jobs = await groupJobs('leaderworkerset-sample', 3, (j) => j.state === 'BINDING' || j.state === 'RUNNING', 90_000);
    expect([...jobs.keys()].sort()).toEqual(['0', '1', '2']);
    for (const [group, job] of jobs) {
      expect(job).toMatchObject({
        kind: 'serving', // a LeaderWorkerSet serves until deleted: never ending in estimates
        replicas: 4,
        minReplicas: 4,
        acceleratorsPerReplica: 0,
        workload: { apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet', name: 'leaderworkerset-sample', uid: manifest.metadata!.uid },
      });
      const pods = await eventually(`4 pods of group ${group} bound`, async () => {
        const bound = await boundPods(qm, job.id);
        return bound.length === 4 ? bound : undefined;
      });
      // The job is one group: its pods all carry that group's index, leader (worker-index 0) among them.
      expect(new Set(pods.map((p) => p.metadata!.labels![GROUP]))).toEqual(new Set([group]));
      expect(pods.map((p) => p.metadata!.labels!['leaderworkerset.sigs.k8s.io/worker-index']).sort()).toEqual(['0', '1', '2', '3']);
      const allocation = new Map(job.allocation!.map((a) => [String(a.replica), a.node]));
      for (const pod of pods) expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));
    }
    await deleteLws('leaderworkerset-sample');
    await groupJobs('leaderworkerset-sample', 3, (j) => j.state === 'CANCELLED');
  }, 180_000);

  it('GPU groups: admitted whole within quota, one group at a time; the group over quota waits with its reason, none of its pods bound', async () => {
    await applyManifest(qm, gpuLws(controllers, 'vision-a', 'vision'));
    // 3 groups × 8 GPUs against vision's 16: two admitted, the third waits.
    const jobs = await groupJobs('vision-a', 3, (j) => j.state !== 'PENDING' || j.pending?.code === 'QUOTA_EXCEEDED', 90_000);
    const states = [...jobs.values()].map((j) => j.state);
    expect(states.filter((s) => s === 'PENDING')).toHaveLength(1);
    const [waitingGroup, waiting] = [...jobs].find(([, j]) => j.state === 'PENDING')!;
    expect(waiting.pending!.message).toMatch(/vision/);
    for (const [group, job] of jobs) {
      if (group === waitingGroup) continue;
      expect(job).toMatchObject({ replicas: 4, acceleratorsPerReplica: 2, admittedReplicas: 4 });
      await eventually(`4 pods of group ${group} bound`, async () => ((await boundPods(qm, job.id)).length === 4 ? true : undefined));
    }
    const pods = await eventually('the waiting group’s pods show the reason', async () => {
      const list = await podsOf(qm, `${ofLws('vision-a')},${GROUP}=${waitingGroup}`);
      return list.length === 4 && list.every((p) => scheduledCondition(p)?.reason === 'QuotaExceeded') ? list : undefined;
    }, 60_000);
    expect(pods.every((p) => !p.spec?.nodeName)).toBe(true);
    expect(scheduledCondition(pods[0]!)!.message).toMatch(/^QUOTA_EXCEEDED: .*vision/);
    await eventually('a QuotaExceeded Event on the LeaderWorkerSet', async () =>
      (await eventsOn(qm, 'LeaderWorkerSet', 'vision-a')).some((e) => e.reason === 'QuotaExceeded') ? true : undefined,
    );
    await eventually('vision-a has 2 Admitted Events', async () => ((await eventsOn(qm, 'LeaderWorkerSet', 'vision-a')).filter((e) => e.reason === 'Admitted').length >= 2 ? true : undefined));
    expect((await eventsOn(qm, 'LeaderWorkerSet', 'vision-a')).filter((e) => e.reason === 'Admitted')).toHaveLength(2);
    expect(await used(qm, 'vision', 'h100')).toBe(16);
  }, 180_000);

  it('a team within nominal reclaims by evicting a borrowing group; it waits as the same job; deleting the LeaderWorkerSet releases quota', async () => {
    const kubelet = runKubelet(qm);
    try {
      const before = await groupJobs('vision-a', 3);
      const running = [...before].filter(([, j]) => j.state !== 'PENDING').map(([g]) => g);
      // nlp: 3 groups × 8 = 24 of the 32; 16 are free, so one of vision's borrowed groups goes.
      await applyManifest(qm, gpuLws(controllers, 'nlp-b', 'nlp', 'high'));
      const nlp = await groupJobs('nlp-b', 3, (j) => j.state === 'RUNNING', 120_000);
      for (const job of nlp.values()) expect(await boundPods(qm, job.id)).toHaveLength(4);

      const after = await groupJobs('vision-a', 3);
      const victims = running.filter((g) => after.get(g)!.preemptionCount === 1);
      expect(victims).toHaveLength(1);
      const victim = after.get(victims[0]!)!;
      expect(victim.id).toBe(before.get(victims[0]!)!.id);
      // Its pods were evicted and the controller recreated the group: the new pods wait, unbound, for the same job.
      await eventually('the victim group recreated and waiting', async () => {
        const list = await podsOf(qm, `${ofLws('vision-a')},${GROUP}=${victims[0]}`);
        return list.length === 4 &&
          list.every((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp && p.metadata?.labels?.['quartermaster.io/job-id'] === victim.id)
          ? true
          : undefined;
      }, 90_000);
      expect((await groupJobs('vision-a', 3)).get(victims[0]!)!.state).toBe('PENDING');
      const preempted = (await eventually('vision-a has a Preempted Event', async () => (await eventsOn(qm, 'LeaderWorkerSet', 'vision-a')).find((e) => e.reason === 'Preempted')));
      expect(preempted).toMatchObject({ type: 'Warning', message: expect.stringContaining('evicts every pod of the gang') });
      expect(await used(qm, 'vision', 'h100')).toBe(8);

      // nlp's LeaderWorkerSet is deleted: its jobs end (CANCELLED), its quota is free, and vision's groups return.
      await deleteLws('nlp-b');
      await groupJobs('nlp-b', 3, (j) => j.state === 'CANCELLED');
      expect(await used(qm, 'nlp', 'h100')).toBe(0);
      const back = await groupJobs('vision-a', 3, (j) => j.state === 'RUNNING' || j.state === 'PENDING', 90_000);
      await eventually('vision’s two groups running again', async () => {
        const now = await groupJobs('vision-a', 3);
        return [...now.values()].filter((j) => j.state === 'RUNNING').length === 2 ? true : undefined;
      }, 90_000);
      expect(back.get(victims[0]!)!.id).toBe(victim.id);
      expect(await used(qm, 'vision', 'h100')).toBe(16);
    } finally {
      await kubelet.stop();
    }
  }, 300_000);
});
