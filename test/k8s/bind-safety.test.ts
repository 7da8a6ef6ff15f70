// DESIGN rule 1 holds against pods Quartermaster did not place, and against pods that are still going:
// - a node another scheduler filled between admission and binding gets nothing bound; the gang is
//   requeued (never failed) and placed again once there is room;
// - a pod the kubelet refuses for lack of room (OutOf<resource>) requeues its gang instead of failing it;
// - after a cancel, the next gang is not bound onto the nodes while the cancelled pods still terminate.
// A pod watch records every node's accelerators in use (non-terminal pods, terminating ones included)
// throughout, and no node may ever exceed its 8.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { ResourceWatch } from '#kube';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
let watch: ResourceWatch<V1Pod>;
/** Highest accelerator count seen in use on each node. */
const peak = new Map<string, number>();
const live = new Map<string, V1Pod>();
/** Quartermaster's pods (by uid): whether the watch's first sight of each had a node already. */
const firstSeenBound = new Map<string, boolean>();

function record(pod: V1Pod, deleted = false): void {
  const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const uid = pod.metadata?.uid;
  if (uid && pod.metadata?.labels?.['quartermaster.io/job-id'] && !firstSeenBound.has(uid)) firstSeenBound.set(uid, !!pod.spec?.nodeName);
  if (deleted || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') live.delete(key);
  else live.set(key, pod);
  const used = new Map<string, number>();
  for (const p of live.values()) {
    const node = p.spec?.nodeName;
    if (!node) continue;
    const gpus = Number(p.spec?.containers[0]?.resources?.limits?.['nvidia.com/gpu'] ?? 0);
    used.set(node, (used.get(node) ?? 0) + gpus);
  }
  for (const [node, gpus] of used) peak.set(node, Math.max(peak.get(node) ?? 0, gpus));
}

beforeAll(async () => {
  qm = await startQm('qm-booking', 2);
  await seedTenancy(qm);
  await eventually('4 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 4 ? true : undefined;
  });
  watch = await qm.cluster.watchPods({ onAdd: (p) => record(p), onUpdate: (p) => record(p), onDelete: (p) => record(p, true) });
}, 180_000);

afterAll(async () => {
  await watch?.stop();
  await qm?.close();
}, 120_000);

type Job = { id: string; state: string; allocation?: { replica: number; node: string }[] };
const getJob = async (id: string): Promise<Job> => (await qm.ok('GET', `/v1/jobs/${id}`)) as Job;
const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const liveBound = async (id: string, n: number): Promise<V1Pod[] | undefined> => {
  const pods = (await qm.jobPods(id)).filter((p) => !p.metadata?.deletionTimestamp);
  return pods.length === n && pods.every((p) => p.spec?.nodeName) ? pods : undefined;
};
const finalizers = (pod: V1Pod, list: string[]): Promise<unknown> =>
  qm.core.patchNamespacedPod(
    { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { metadata: { finalizers: list } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
const eventsOf = async (id: string): Promise<{ kind: string; message: string }[]> => {
  const body = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: { kind: string; message: string }[] } | { kind: string; message: string }[];
  return Array.isArray(body) ? body : (body.items ?? []);
};
const h100 = (): string[] => qm.nodes.filter((n) => n.includes('-h100-'));

describe('no double booking', () => {
  it('a node another scheduler filled while the gang waited for its victims gets nothing bound: the gang is requeued, not failed, and placed once there is room', async () => {
    // A 1 × 8 victim holds one h100 node; its pod stays Terminating (finalizer) so the preemptor waits.
    const low = await submit(gangBody({ name: 'victim', priority: 1, replicas: 1 }));
    const [victimPod] = (await eventually('victim bound', () => liveBound(low, 1)));
    await qm.kubelet();
    await eventually('victim running', async () => ((await getJob(low)).state === 'RUNNING' ? true : undefined));
    await finalizers(victimPod!, ['test.quartermaster.io/hold']);

    const high = await submit(gangBody({ name: 'preemptor', priority: 100, replicas: 2 }));
    await eventually('preemptor admitted on both h100 nodes', async () => ((await getJob(high)).allocation?.length === 2 ? true : undefined));
    await eventually('victim pod terminating', async () => ((await qm.cluster.getPod(victimPod!.metadata!.name!, qm.namespace))?.metadata?.deletionTimestamp ? true : undefined));

    // Meanwhile an ordinary default-scheduler GPU pod lands on the other node (as kube-scheduler would
    // place it: the node is empty as far as Kubernetes can tell).
    const free = h100().find((n) => n !== victimPod!.spec!.nodeName)!;
    await qm.core.createNamespacedPod({
      namespace: qm.namespace,
      body: { metadata: { name: 'someone-elses-training' }, spec: { nodeName: free, containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }] } },
    });
    await finalizers(victimPod!, []); // the victim goes: the preemptor's bind proceeds

    await eventually('preemptor requeued for the conflict', async () => {
      const requeued = (await eventsOf(high)).find((e) => e.kind === 'job.requeued');
      return requeued?.message.includes(`placement conflict at bind time: node ${free} has no room`) ? true : undefined;
    });
    expect((await qm.jobPods(high)).filter((p) => p.spec?.nodeName === free)).toEqual([]);
    expect((await getJob(high)).state).not.toBe('FAILED');

    // The other scheduler's pod ends: the gang is placed again and bound.
    await qm.core.deleteNamespacedPod({ name: 'someone-elses-training', namespace: qm.namespace, gracePeriodSeconds: 0 });
    await eventually('preemptor bound after the conflict', () => liveBound(high, 2));
    for (const node of h100()) expect(peak.get(node) ?? 0).toBeLessThanOrEqual(8);
    for (const id of [low, high]) await qm.ok('DELETE', `/v1/jobs/${id}`);
    await eventually('h100 pods gone', async () => ((await qm.cluster.listPods({ namespace: qm.namespace })).length === 0 ? true : undefined));
  }, 150_000);

  it('a pod the kubelet refused for lack of room (OutOfnvidia.com/gpu) requeues its gang instead of failing it', async () => {
    const id = await submit(gangBody({ name: 'refused', flavors: ['a100'] }));
    const first = (await eventually('bound', () => liveBound(id, 2)));
    // What the kubelet writes when the device plugin has no GPU left for the pod.
    await qm.cluster.patchPodStatus(
      first[0]!.metadata!.name!,
      { phase: 'Failed', reason: 'OutOfnvidia.com/gpu', message: "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 8, used: 8, capacity: 8" },
      qm.namespace,
    );
    await eventually('requeued, not failed', async () => {
      const requeued = (await eventsOf(id)).find((e) => e.kind === 'job.requeued');
      return requeued?.message.includes('was failed by its node (OutOfnvidia.com/gpu') ? true : undefined;
    });
    const again = await eventually('bound again on fresh pods', async () => {
      const pods = await liveBound(id, 2);
      return pods && pods.every((p) => !first.some((f) => f.metadata!.uid === p.metadata!.uid)) ? pods : undefined;
    });
    expect(again).toHaveLength(2);
    expect((await eventsOf(id)).map((e) => e.kind)).not.toContain('job.failed');
    await qm.ok('DELETE', `/v1/jobs/${id}`);
    await eventually('a100 pods gone', async () => ((await qm.jobPods(id)).length === 0 ? true : undefined));
  }, 120_000);

  it('after a cancel, the next gang waits for the cancelled pods to be gone before it is bound to their nodes', async () => {
    const first = await submit(gangBody({ name: 'cancelled', replicas: 2 }));
    const pods = (await eventually('first bound', () => liveBound(first, 2)));
    await qm.kubelet();
    await eventually('first running', async () => ((await getJob(first)).state === 'RUNNING' ? true : undefined));
    // The kubelet takes its time to stop them: they stay Terminating.
    for (const pod of pods) await finalizers(pod, ['test.quartermaster.io/hold']);
    await qm.ok('DELETE', `/v1/jobs/${first}`);
    await eventually('cancelled pods terminating', async () => ((await qm.jobPods(first)).every((p) => p.metadata?.deletionTimestamp) ? true : undefined));
    // The job's allocation is gone; the scheduler's node sync must count the terminating pods on their nodes
    // (until it has seen them, a gang admitted there would only wait at its bind, which the next step
    // does not look for).
    const held = new Set(pods.map((p) => p.spec!.nodeName!));
    await eventually('terminating pods counted on their nodes', async () => {
      const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { name: string; external: { accelerators: number } }[] }).items;
      return nodes.filter((n) => held.has(n.name) && n.external.accelerators >= 8).length === held.size ? true : undefined;
    });

    const next = await submit(gangBody({ name: 'next', replicas: 2 }));
    // The terminating pods still hold both h100 nodes, and the scheduler sees it.
    await eventually('next waits for capacity', async () => {
      const job = (await qm.ok('GET', `/v1/jobs/${next}`)) as { state: string; pending?: { code: string } };
      return job.state === 'PENDING' && job.pending?.code === 'INSUFFICIENT_CAPACITY' ? true : undefined;
    });
    expect((await qm.jobPods(next)).filter((p) => p.spec?.nodeName)).toEqual([]);

    for (const pod of pods) await finalizers(pod, []);
    await eventually('next bound once they are gone', () => liveBound(next, 2));
    for (const node of h100()) expect(peak.get(node) ?? 0).toBeLessThanOrEqual(8);
    await qm.ok('DELETE', `/v1/jobs/${next}`);
  }, 120_000);

  it('its own pods are made bound to their allocated nodes (one write, no binding after): none was ever seen unbound', async () => {
    const id = await submit(gangBody({ name: 'made-bound', replicas: 2 }));
    const pods = await eventually('bound', () => liveBound(id, 2));
    await eventually('the watch saw them', () => Promise.resolve(pods.every((p) => firstSeenBound.has(p.metadata!.uid!)) ? true : undefined));
    // Every pod of this file's gangs (the requeued and re-placed ones above too) was bound when first seen.
    expect([...firstSeenBound.values()].filter((bound) => !bound)).toEqual([]);
    expect(firstSeenBound.size).toBeGreaterThanOrEqual(2);
    await qm.ok('DELETE', `/v1/jobs/${id}`);
  }, 120_000);
});
