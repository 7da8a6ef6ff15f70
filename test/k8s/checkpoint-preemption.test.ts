// Checkpoint-aware preemption on a real API server: a job that declares checkpointing runs with its grace
// period as its pods' terminationGracePeriodSeconds, its executor reports progress by annotating its pod,
// and when a higher-priority job preempts it, its pod is evicted with that grace period (the API server keeps
// it Terminating for the kubelet to send SIGTERM and wait). The preemptor is not bound while the victim's pod
// is still there; a checkpoint its pod reports while Terminating is recorded; the victim is requeued with its
// progress and resumes on its next admission.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_COMPLETED_FRACTION } from '#kube';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-ckpt', 1);
  await seedTenancy(qm);
  await eventually('2 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 2 ? true : undefined;
  });
}, 30 * 60_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

interface JobView {
  state: string;
  progress: { lastCheckpointAt: string | null; completedFraction: number | null };
}
const job = async (id: string): Promise<JobView> => (await qm.ok('GET', `/v1/jobs/${id}`)) as JobView;
const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const livePod = (id: string): Promise<V1Pod> =>
  eventually(`a bound pod of ${id}`, async () => {
    const pods = (await qm.jobPods(id)).filter((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp);
    return pods.length === 1 ? pods[0] : undefined;
  });
const eventsOf = async (pod: string): Promise<CoreV1Event[]> =>
  (await qm.core.listNamespacedEvent({ namespace: qm.namespace, fieldSelector: `involvedObject.name=${pod}` })).items;

describe('checkpoint-aware preemption in Kubernetes', () => {
  it("evicts the victim's pod with its checkpoint grace period and requeues it with its progress", async () => {
    const checkpoint = { intervalSeconds: 3600, gracePeriodSeconds: 45 };
    const trainer = await submit(gangBody({ name: 'trainer', priority: 0, replicas: 1, expectedRuntimeSeconds: 7200, checkpoint }));
    const pod = await livePod(trainer);
    expect(pod.spec?.terminationGracePeriodSeconds).toBe(45);
    await qm.kubelet();
    await eventually('trainer RUNNING', async () => ((await job(trainer)).state === 'RUNNING' ? true : undefined));

    // Its executor writes a checkpoint and says so on its pod.
    const at = new Date(Date.now() - 1000).toISOString();
    await qm.core.patchNamespacedPod(
      { name: pod.metadata!.name!, namespace: qm.namespace, body: [{ op: 'add', path: '/metadata/annotations/quartermaster.io~1last-checkpoint-at', value: at }, { op: 'add', path: '/metadata/annotations/quartermaster.io~1completed-fraction', value: '0.5' }] },
    );
    const reported = await eventually('progress recorded from the pod', async () => {
      const view = await job(trainer);
      return view.progress.completedFraction === 0.5 ? view.progress : undefined;
    });
    expect(reported).toEqual({ lastCheckpointAt: at, completedFraction: 0.5 });

    // A higher-priority job of the team needs the node: the trainer is preempted.
    const urgent = await submit(gangBody({ name: 'urgent', priority: 100, replicas: 1 }));
    const evicted = await eventually('trainer pod evicted with its grace period', async () => {
      const [p] = await qm.jobPods(trainer);
      return p?.metadata?.deletionTimestamp ? p : undefined;
    });
    expect(evicted.metadata?.name).toBe(pod.metadata?.name);
    expect(evicted.metadata?.deletionGracePeriodSeconds).toBe(45);
    // The pod is still there (its kubelet gives it 45 s): the preemptor is not bound meanwhile.
    expect((await qm.jobPods(urgent)).filter((p) => p.spec?.nodeName)).toEqual([]);
    const requeued = await job(trainer);
    expect(requeued.state).toBe('PENDING');
    expect(requeued.progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.5 });
    const preempted = await eventually('Preempted Event on the pod', async () => (await eventsOf(pod.metadata!.name!)).find((e) => e.reason === 'Preempted'));
    expect(preempted.message).toContain('given 45 s to checkpoint');

    // In its grace period the trainer writes a checkpoint and says so on its Terminating pod: recorded, though it is PENDING.
    const during = new Date(Date.now() - 500).toISOString();
    await qm.core.patchNamespacedPod({
      name: pod.metadata!.name!,
      namespace: qm.namespace,
      body: [{ op: 'replace', path: '/metadata/annotations/quartermaster.io~1last-checkpoint-at', value: during }, { op: 'replace', path: '/metadata/annotations/quartermaster.io~1completed-fraction', value: '0.6' }],
    });
    const last = await eventually('progress written in the grace period recorded', async () => {
      const view = await job(trainer);
      return view.progress.completedFraction === 0.6 ? view : undefined;
    });
    expect([last.state, last.progress]).toEqual(['PENDING', { lastCheckpointAt: during, completedFraction: 0.6 }]);

    // The trainer checkpointed and exited: its pod goes, the preemptor is bound on the node.
    await qm.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const urgentPod = await livePod(urgent);
    expect(urgentPod.spec?.nodeName).toBe(evicted.spec?.nodeName);
    expect(urgentPod.spec?.terminationGracePeriodSeconds).toBe(30); // it does not checkpoint: Kubernetes' default

    // The preemptor finishes; the trainer is admitted again with its progress kept (it resumes from its checkpoint).
    await qm.kubelet();
    await qm.cluster.patchPodStatus(urgentPod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    const again = await livePod(trainer);
    expect(again.metadata?.name).toBe(pod.metadata?.name); // same replica, a new pod
    expect(again.metadata?.uid).not.toBe(pod.metadata?.uid);
    expect(again.metadata?.annotations?.[ANNOTATION_COMPLETED_FRACTION]).toBeUndefined();
    expect(again.spec?.terminationGracePeriodSeconds).toBe(45);
    const resumed = await job(trainer);
    expect(['ADMITTED', 'BINDING', 'RUNNING']).toContain(resumed.state);
    expect(resumed.progress.completedFraction).toBe(0.6);
  }, 180_000);
});
