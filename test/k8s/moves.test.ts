// A move to a faster flavor on a real API server: a running job that checkpoints starts on the a100 node
// because the h100 node is busy for long; when the h100 node frees, a cycle moves it there — evicted and
// admitted again on the h100 in one commit. Its pod on the a100 is evicted with its checkpoint grace period
// and says why (a Moved Event); the pod of the new admission is bound to the h100 node once the old one is
// gone, and until then the job is not RUNNING however the old pod changes. A node of the faster flavor that
// joins the cluster moves a running job the same way, with nothing pending.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, type CoreV1Event, type V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_ADMISSION } from '../../apps/scheduler/src/kubernetes/bind-checks.js';
import { fakeNode, uniqueName } from './support/cluster.js';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
let h100Node: string;
let a100Node: string;

beforeAll(async () => {
  qm = await startQm('qm-move', 1);
  await seedTenancy(qm);
  [h100Node, a100Node] = qm.nodes as [string, string];
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
  flavor: string | null;
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
const annotateProgress = (pod: string, fraction: string): Promise<V1Pod> =>
  qm.core.patchNamespacedPod({
    name: pod,
    namespace: qm.namespace,
    body: [
      { op: 'add', path: '/metadata/annotations/quartermaster.io~1last-checkpoint-at', value: new Date(Date.now() - 1000).toISOString() },
      { op: 'add', path: '/metadata/annotations/quartermaster.io~1completed-fraction', value: fraction },
    ],
  });
const progressRecorded = (id: string, fraction: number): Promise<JobView> =>
  eventually(`progress ${fraction} recorded from the pod`, async () => {
    const view = await job(id);
    return view.progress.completedFraction === fraction ? view : undefined;
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
    const blocker = await submit(gangBody({ name: 'blocker', replicas: 1, preemptible: false, expectedRuntimeSeconds: 1000 * 3600 }));
    const blockerPod = await livePod(blocker);
    expect(blockerPod.spec?.nodeName).toBe(h100Node);
    await qm.kubelet();

    // 100 h on an h100, 200 h on an a100: starting on the a100 now beats waiting 1,000 h.
    const mover = await submit(
      gangBody({
        name: 'mover',
        priority: 0,
        replicas: 1,
        flavors: ['h100', 'a100'],
        flavorSelection: 'fastest',
        speeds: { h100: 2, a100: 1 },
        expectedRuntimeSeconds: 100 * 3600,
        checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 30 },
      }),
    );
    const first = await livePod(mover);
    expect([first.spec?.nodeName, first.spec?.terminationGracePeriodSeconds]).toEqual([a100Node, 30]);
    await qm.kubelet();
    await eventually('mover RUNNING', async () => ((await job(mover)).state === 'RUNNING' ? true : undefined));
    await annotateProgress(first.metadata!.name!, '0.01');
    await progressRecorded(mover, 0.01);

    // Its eviction is held back for a while: the old pod keeps running after the move was committed.
    const hold = await holdPod(first.metadata!.name!);
    try {
      // The h100 node frees: a cycle moves the mover there.
      await qm.cluster.patchPodStatus(blockerPod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
      // Its bind waits for the old pod to go (it cannot, yet).
      await eventually('mover admitted on the h100, binding', async () => {
        const view = await job(mover);
        return view.flavor === 'h100' && view.state === 'BINDING' ? view : undefined;
      });
      // The old pod still runs, and reports progress: it is recorded, and says nothing of the new admission.
      await annotateProgress(first.metadata!.name!, '0.02');
      await progressRecorded(mover, 0.02);
      await annotateProgress(first.metadata!.name!, '0.03'); // its report is read after the previous one was judged
      await progressRecorded(mover, 0.03);
      expect((await job(mover)).state).toBe('BINDING');
      expect((await qm.jobPods(mover)).map((p) => [p.metadata?.uid, p.spec?.nodeName, p.metadata?.deletionTimestamp ?? null])).toEqual([[first.metadata?.uid, a100Node, null]]);
    } finally {
      await hold.release();
    }

    // Its eviction goes through: the old pod gets the checkpoint grace period and says why.
    const evicted = await eventually('old pod evicted', async () => {
      const [p] = await qm.jobPods(mover);
      return p?.metadata?.deletionTimestamp ? p : undefined;
    });
    expect([evicted.metadata?.uid, evicted.metadata?.deletionGracePeriodSeconds]).toEqual([first.metadata?.uid, 30]);
    const event = await eventually('Moved Event on the old pod', async () => (await eventsOf(first.metadata!.name!)).find((e) => e.reason === 'Moved'));
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
    await annotateProgress(first.metadata!.name!, '0.04');
    await progressRecorded(mover, 0.04);

    // The old pod checkpointed and exited: the new admission's pod is bound on the h100 node.
    await qm.core.deleteNamespacedPod({ name: first.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const second = await livePod(mover);
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    expect([second.spec?.nodeName, second.spec?.terminationGracePeriodSeconds]).toEqual([h100Node, 30]);
    expect(second.metadata?.annotations?.[ANNOTATION_ADMISSION]).not.toBe(first.metadata?.annotations?.[ANNOTATION_ADMISSION]);
    expect((await job(mover)).state).toBe('BINDING');
    await qm.kubelet();
    const running = await eventually('mover RUNNING on the h100', async () => {
      const view = await job(mover);
      return view.state === 'RUNNING' ? view : undefined;
    });
    expect(running).toMatchObject({ flavor: 'h100', progress: { completedFraction: 0.04 } });
  }, 240_000);

  it('moves a running job to an h100 node that joins the cluster (no job pending)', async () => {
    // The h100 node is the first mover's for ~50 h more: 20 h on the free a100 beats waiting for it.
    const mover = await submit(
      gangBody({
        name: 'mover-2',
        priority: 0,
        replicas: 1,
        flavors: ['h100', 'a100'],
        flavorSelection: 'fastest',
        speeds: { h100: 2, a100: 1 },
        expectedRuntimeSeconds: 10 * 3600,
        checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 20 },
      }),
    );
    const first = await livePod(mover);
    expect(first.spec?.nodeName).toBe(a100Node);
    await qm.kubelet();
    await eventually('mover-2 RUNNING', async () => ((await job(mover)).state === 'RUNNING' ? true : undefined));

    const joined = uniqueName('qm-move-h100-new');
    qm.nodes.push(joined);
    await qm.core.createNode({ body: fakeNode(joined, { labels: { 'nvidia.com/gpu.product': qm.h100Product }, extended: { 'nvidia.com/gpu': '8' } }) });
    const evicted = await eventually('old pod evicted once the node joined', async () => {
      const [p] = await qm.jobPods(mover);
      return p?.metadata?.deletionTimestamp ? p : undefined;
    });
    expect([evicted.metadata?.uid, evicted.metadata?.deletionGracePeriodSeconds]).toEqual([first.metadata?.uid, 20]);
    const event = await eventually('Moved Event', async () => (await eventsOf(first.metadata!.name!)).find((e) => e.reason === 'Moved'));
    expect(event.message).toMatch(/\(given 20 s to checkpoint\) to move it: moved from a100 to h100: expected to finish [\d.]+ h earlier/);

    await qm.core.deleteNamespacedPod({ name: first.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const second = await livePod(mover);
    expect(second.spec?.nodeName).toBe(joined);
    await qm.kubelet();
    await eventually('mover-2 RUNNING on the new node', async () => ((await job(mover)).state === 'RUNNING' ? true : undefined));
    expect((await job(mover)).flavor).toBe('h100');
  }, 240_000);
});
