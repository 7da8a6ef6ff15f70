// Checkpoint-aware preemption on a real API server: a job that declares checkpointing runs with its grace
// period as its pods' terminationGracePeriodSeconds, its executor reports progress by annotating its pod,
// and when a higher-priority job preempts it, its pod is evicted with that grace period (the API server keeps
// it Terminating for the kubelet to send SIGTERM and wait). The preemptor is not bound while the victim's pod
// is still there; a checkpoint its pod reports while Terminating is recorded; the victim is requeued with its
// progress and resumes on its next admission.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ANNOTATION_COMPLETED_FRACTION } from '#kube';
import { eventually, gangBody, type QmEnv } from './scheduler-harness.js';
import { checkpointing, startSeededQm } from './support/checkpointing.js';

let qm: QmEnv;
let t: ReturnType<typeof checkpointing>;

beforeAll(async () => {
  qm = await startSeededQm('qm-ckpt');
  t = checkpointing(qm);
}, 30 * 60_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

describe('checkpoint-aware preemption in Kubernetes', () => {
  it("evicts the victim's pod with its checkpoint grace period and requeues it with its progress", async () => {
    const checkpoint = { intervalSeconds: 3600, gracePeriodSeconds: 45 };
    const { id: trainer, pod } = await t.startRunning({ name: 'trainer', priority: 0, expectedRuntimeSeconds: 7200, checkpoint });
    expect(pod.spec?.terminationGracePeriodSeconds).toBe(45);

    // Its executor writes a checkpoint and says so on its pod.
    const at = new Date(Date.now() - 1000).toISOString();
    await t.annotateProgress(pod.metadata!.name!, '0.5', at);
    expect((await t.progressRecorded(trainer, 0.5)).progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.5 });

    // A higher-priority job of the team needs the node: the trainer is preempted.
    const urgent = await t.submit(gangBody({ name: 'urgent', priority: 100, replicas: 1 }));
    const evicted = await t.evictedPod(trainer, 'trainer pod evicted with its grace period');
    expect(evicted.metadata?.name).toBe(pod.metadata?.name);
    expect(evicted.metadata?.deletionGracePeriodSeconds).toBe(45);
    // The pod is still there (its kubelet gives it 45 s): the preemptor is not bound meanwhile.
    expect((await qm.jobPods(urgent)).filter((p) => p.spec?.nodeName)).toEqual([]);
    const requeued = await t.job(trainer);
    expect(requeued.state).toBe('PENDING');
    expect(requeued.progress).toEqual({ lastCheckpointAt: at, completedFraction: 0.5 });
    const preempted = await eventually('Preempted Event on the pod', async () => (await t.eventsOf(pod.metadata!.name!)).find((e) => e.reason === 'Preempted'));
    expect(preempted.message).toContain('given 45 s to checkpoint');

    // In its grace period the trainer writes a checkpoint and says so on its Terminating pod: recorded, though it is PENDING.
    const during = new Date(Date.now() - 500).toISOString();
    await t.annotateProgress(pod.metadata!.name!, '0.6', during);
    const last = await t.progressRecorded(trainer, 0.6);
    expect([last.state, last.progress]).toEqual(['PENDING', { lastCheckpointAt: during, completedFraction: 0.6 }]);

    // The trainer checkpointed and exited: its pod goes, the preemptor is bound on the node.
    await qm.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const urgentPod = await t.livePod(urgent);
    expect(urgentPod.spec?.nodeName).toBe(evicted.spec?.nodeName);
    expect(urgentPod.spec?.terminationGracePeriodSeconds).toBe(30); // it does not checkpoint: Kubernetes' default

    // The preemptor finishes; the trainer is admitted again with its progress kept (it resumes from its checkpoint).
    await qm.kubelet();
    await qm.cluster.patchPodStatus(urgentPod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    const again = await t.livePod(trainer);
    expect(again.metadata?.name).toBe(pod.metadata?.name); // same replica, a new pod
    expect(again.metadata?.uid).not.toBe(pod.metadata?.uid);
    expect(again.metadata?.annotations?.[ANNOTATION_COMPLETED_FRACTION]).toBeUndefined();
    expect(again.spec?.terminationGracePeriodSeconds).toBe(45);
    const resumed = await t.job(trainer);
    expect(['ADMITTED', 'BINDING', 'RUNNING']).toContain(resumed.state);
    expect(resumed.progress.completedFraction).toBe(0.6);
  }, 180_000);
});
