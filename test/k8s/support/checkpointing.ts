// What the checkpoint tests (checkpoint-preemption, moves) do to their jobs: a Quartermaster on startQm's two
// nodes, its jobs read and submitted over REST, their bound pods, Events and the progress their pods annotate.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from '../scheduler-harness.js';

export interface JobView {
  state: string;
  flavor: string | null;
  progress: { lastCheckpointAt: string | null; completedFraction: number | null };
}

/** startQm with one scheduler, its tenancy seeded and both of its nodes synced from Kubernetes. */
export async function startSeededQm(name: string): Promise<QmEnv> {
  const qm = await startQm(name, 1);
  await seedTenancy(qm);
  await eventually('2 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 2 ? true : undefined;
  });
  return qm;
}

export function checkpointing(qm: QmEnv) {
  const job = async (id: string): Promise<JobView> => (await qm.ok('GET', `/v1/jobs/${id}`)) as JobView;
  const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
  /** The job's one bound pod that is not being deleted. */
  const livePod = (id: string): Promise<V1Pod> =>
    eventually(`a bound pod of ${id}`, async () => {
      const pods = (await qm.jobPods(id)).filter((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp);
      return pods.length === 1 ? pods[0] : undefined;
    });
  const eventsOf = async (pod: string): Promise<CoreV1Event[]> =>
    (await qm.core.listNamespacedEvent({ namespace: qm.namespace, fieldSelector: `involvedObject.name=${pod}` })).items;
  /** The pod's executor says it checkpointed at `at` (a second ago by default), `fraction` of the work done. */
  const annotateProgress = (pod: string, fraction: string, at = new Date(Date.now() - 1000).toISOString()): Promise<V1Pod> =>
    qm.core.patchNamespacedPod({
      name: pod,
      namespace: qm.namespace,
      body: [
        { op: 'add', path: '/metadata/annotations/quartermaster.io~1last-checkpoint-at', value: at },
        { op: 'add', path: '/metadata/annotations/quartermaster.io~1completed-fraction', value: fraction },
      ],
    });
  const progressRecorded = (id: string, fraction: number): Promise<JobView> =>
    eventually(`progress ${fraction} recorded from the pod`, async () => {
      const view = await job(id);
      return view.progress.completedFraction === fraction ? view : undefined;
    });
  /** Submits a gang of one replica, waits for its pod to be bound and plays its kubelet until the job is RUNNING. */
  const startRunning = async (body: Record<string, unknown>): Promise<{ id: string; pod: V1Pod }> => {
    const id = await submit(gangBody({ replicas: 1, ...body }));
    const pod = await livePod(id);
    await qm.kubelet();
    await eventually(`${String(body.name)} RUNNING`, async () => ((await job(id)).state === 'RUNNING' ? true : undefined));
    return { id, pod };
  };
  /** The job's pod once its deletion (an eviction) has started. */
  const evictedPod = (id: string, what: string): Promise<V1Pod> =>
    eventually(what, async () => {
      const [p] = await qm.jobPods(id);
      return p?.metadata?.deletionTimestamp ? p : undefined;
    });
  return { job, submit, livePod, eventsOf, annotateProgress, progressRecorded, startRunning, evictedPod };
}
