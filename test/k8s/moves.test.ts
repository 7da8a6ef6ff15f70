// A move to a faster flavor on a real API server: a running job that checkpoints starts on the a100 node
// because the h100 node is busy for long; when the h100 node frees, a cycle moves it there — evicted and
// admitted again on the h100 in one commit. Its pod on the a100 is evicted with its checkpoint grace period
// and says why (a Moved Event); the pod of the new admission is bound to the h100 node once the old one is
// gone, and until then the job is not RUNNING however the old pod changes. A node of the faster flavor that
// joins the cluster moves a running job the same way, with nothing pending.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { ANNOTATION_ADMISSION } from '#kube';
import { fakeNode, uniqueName } from './support/cluster.js';
import { checkpointing, startSeededQm } from './support/checkpointing.js';
import { eventually, gangBody, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
let t: ReturnType<typeof checkpointing>;
let h100Node: string;
let a100Node: string;

beforeAll(async () => {
  qm = await startSeededQm('qm-move');
  t = checkpointing(qm);
  [h100Node, a100Node] = qm.nodes as [string, string];
}, 30 * 60_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

/** A job that checkpoints (its grace period `gracePeriodSeconds`) and runs twice as fast on an h100 as on an a100, started RUNNING. */
const startMover = (name: string, expectedRuntimeSeconds: number, gracePeriodSeconds: number) =>
  t.startRunning({
    name,
    priority: 0,
    flavors: ['h100', 'a100'],
    flavorSelection: 'fastest',
    speeds: { h100: 2, a100: 1 },
    expectedRuntimeSeconds,
    checkpoint: { intervalSeconds: 1800, gracePeriodSeconds },
  });

/** Until `release`, the API server refuses to delete or evict this pod (as if its eviction had not been carried out yet). */
async function holdPod(name: string): Promise<{ release(): Promise<void> }> {
  const admission = qm.cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const policy = `qm-test-hold-${qm.namespace}`.slice(0, 63);
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods/eviction'] },
          ],
        },
        validations: [{ expression: `request.namespace != '${qm.namespace}' || request.name != '${name}'`, message: 'held by the test' }],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: policy }, spec: { policyName: policy, validationActions: ['Deny'] } } });
  await eventually('the policy holds the pod', async () =>
    qm.core.deleteNamespacedPod({ name, namespace: qm.namespace, dryRun: 'All' }).then(
      () => undefined,
      () => true,
    ),
  );
  return {
    async release() {
      await admission.deleteValidatingAdmissionPolicyBinding({ name: policy }).catch(() => undefined);
      await admission.deleteValidatingAdmissionPolicy({ name: policy }).catch(() => undefined);
    },
  };
}

describe('moves to a faster flavor in Kubernetes', () => {
  it('evicts the job from the a100 node with its grace period and binds it on the h100 node that freed up', async () => {
    // The h100 node is busy for 1,000 h.
    const blocker = await t.submit(gangBody({ name: 'blocker', replicas: 1, preemptible: false, expectedRuntimeSeconds: 1000 * 3600 }));
    const blockerPod = await t.livePod(blocker);
    expect(blockerPod.spec?.nodeName).toBe(h100Node);
    await qm.kubelet();

    // 100 h on an h100, 200 h on an a100: starting on the a100 now beats waiting 1,000 h.
    const { id: mover, pod: first } = await startMover('mover', 100 * 3600, 30);
    expect([first.spec?.nodeName, first.spec?.terminationGracePeriodSeconds]).toEqual([a100Node, 30]);
    await t.annotateProgress(first.metadata!.name!, '0.01');
    await t.progressRecorded(mover, 0.01);

    // Its eviction is held back for a while: the old pod keeps running after the move was committed.
    const hold = await holdPod(first.metadata!.name!);
    try {
      // The h100 node frees: a cycle moves the mover there.
      await qm.cluster.patchPodStatus(blockerPod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
      // Its bind waits for the old pod to go (it cannot, yet).
      await eventually('mover admitted on the h100, binding', async () => {
        const view = await t.job(mover);
        return view.flavor === 'h100' && view.state === 'BINDING' ? view : undefined;
      });
      // The old pod still runs, and reports progress: it is recorded, and says nothing of the new admission.
      await t.annotateProgress(first.metadata!.name!, '0.02');
      await t.progressRecorded(mover, 0.02);
      await t.annotateProgress(first.metadata!.name!, '0.03'); // its report is read after the previous one was judged
      await t.progressRecorded(mover, 0.03);
      expect((await t.job(mover)).state).toBe('BINDING');
      expect((await qm.jobPods(mover)).map((p) => [p.metadata?.uid, p.spec?.nodeName, p.metadata?.deletionTimestamp ?? null])).toEqual([[first.metadata?.uid, a100Node, null]]);
    } finally {
      await hold.release();
    }

    // Its eviction goes through: the old pod gets the checkpoint grace period and says why.
    const evicted = await t.evictedPod(mover, 'old pod evicted');
    expect([evicted.metadata?.uid, evicted.metadata?.deletionGracePeriodSeconds]).toEqual([first.metadata?.uid, 30]);
    const event = await eventually('Moved Event on the old pod', async () => (await t.eventsOf(first.metadata!.name!)).find((e) => e.reason === 'Moved'));
    expect(event.type).toBe('Normal');
    expect(event.message).toMatch(/^Quartermaster evicts the whole gang \(given 30 s to checkpoint\) to move it: moved from a100 to h100: expected to finish [\d.]+ h earlier/);
    const jobEvents = ((await qm.ok('GET', `/v1/jobs/${mover}/events`)) as { items: { kind: string; message: string }[] }).items;
    const movedEvent = jobEvents.find((e) => e.kind === 'job.moved');
    expect(movedEvent?.message).toMatch(/^moved from a100 to h100: expected to finish [\d.]+ h earlier/);
    expect(event.message).toContain(movedEvent!.message);
    const admitted = jobEvents.filter((e) => e.kind === 'job.admitted').map((e) => e.message);
    expect(admitted).toHaveLength(2);
    expect(admitted).toEqual(expect.arrayContaining([expect.stringMatching(/8 a100 on 1 node\(s\)$/), expect.stringMatching(/8 h100 on 1 node\(s\) \(moved from a100\)$/)]));

    // Its checkpoint written in the grace period counts.
    await t.annotateProgress(first.metadata!.name!, '0.04');
    await t.progressRecorded(mover, 0.04);

    // The old pod checkpointed and exited: the new admission's pod is bound on the h100 node.
    await qm.core.deleteNamespacedPod({ name: first.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const second = await t.livePod(mover);
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    expect([second.spec?.nodeName, second.spec?.terminationGracePeriodSeconds]).toEqual([h100Node, 30]);
    expect(second.metadata?.annotations?.[ANNOTATION_ADMISSION]).not.toBe(first.metadata?.annotations?.[ANNOTATION_ADMISSION]);
    expect((await t.job(mover)).state).toBe('BINDING');
    await qm.kubelet();
    const running = await eventually('mover RUNNING on the h100', async () => {
      const view = await t.job(mover);
      return view.state === 'RUNNING' ? view : undefined;
    });
    expect(running).toMatchObject({ flavor: 'h100', progress: { completedFraction: 0.04 } });
  }, 240_000);

  it('moves a running job to an h100 node that joins the cluster (no job pending)', async () => {
    // The h100 node is the first mover's for ~50 h more: 20 h on the free a100 beats waiting for it.
    const { id: mover, pod: first } = await startMover('mover-2', 10 * 3600, 20);
    expect(first.spec?.nodeName).toBe(a100Node);

    const joined = uniqueName('qm-move-h100-new');
    qm.nodes.push(joined);
    await qm.core.createNode({ body: fakeNode(joined, { labels: { 'nvidia.com/gpu.product': qm.h100Product }, extended: { 'nvidia.com/gpu': '8' } }) });
    const evicted = await t.evictedPod(mover, 'old pod evicted once the node joined');
    expect([evicted.metadata?.uid, evicted.metadata?.deletionGracePeriodSeconds]).toEqual([first.metadata?.uid, 20]);
    const event = await eventually('Moved Event', async () => (await t.eventsOf(first.metadata!.name!)).find((e) => e.reason === 'Moved'));
    expect(event.message).toMatch(/\(given 20 s to checkpoint\) to move it: moved from a100 to h100: expected to finish [\d.]+ h earlier/);

    await qm.core.deleteNamespacedPod({ name: first.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const second = await t.livePod(mover);
    expect(second.spec?.nodeName).toBe(joined);
    await qm.kubelet();
    await eventually('mover-2 RUNNING on the new node', async () => ((await t.job(mover)).state === 'RUNNING' ? true : undefined));
    expect((await t.job(mover)).flavor).toBe('h100');
  }, 240_000);
});
