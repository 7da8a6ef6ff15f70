// Kubernetes mode against the real apiserver: preemption evicts whole victim gangs before the
// preemptor's pods are bound; cordoned nodes lose their capacity; other schedulers' pods count as
// external usage; annotated foreign pods are imported and gang-scheduled (none bound until all fit).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { ResourceWatch } from '#kube';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-cluster');
  await seedTenancy(qm);
  await eventually('8 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

type Job = { id: string; state: string; pending: { code: string | null } | null; allocation?: { replica: number; node: string }[] };
const getJob = async (id: string): Promise<Job> => (await qm.ok('GET', `/v1/jobs/${id}`)) as Job;
/** The job once a scheduling cycle has judged it: left PENDING, or still PENDING with the cycle's reason. */
const judged = (id: string): Promise<Job> =>
  eventually(`a cycle judged job ${id}`, async () => {
    const job = await getJob(id);
    return job.state !== 'PENDING' || job.pending?.code ? job : undefined;
  });
const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const allBound = async (id: string, n: number): Promise<true | undefined> => {
  const pods = await qm.jobPods(id);
  return pods.length === n && pods.every((p) => p.spec?.nodeName) ? true : undefined;
};

/** Two running low-priority gangs of 2 × 8 h100 that fill the h100 nodes: the victims of a preemption test. */
async function fillWithLowGangs(prefix: string): Promise<[string, string]> {
  const low1 = await submit(gangBody({ name: `${prefix}low1`, priority: 1 }));
  const low2 = await submit(gangBody({ name: `${prefix}low2`, priority: 2 }));
  await eventually('low gangs bound', async () => ((await allBound(low1, 2)) && (await allBound(low2, 2)) ? true : undefined));
  await qm.kubelet();
  await eventually('low gangs running', async () => ((await getJob(low1)).state === 'RUNNING' && (await getJob(low2)).state === 'RUNNING' ? true : undefined));
  return [low1, low2];
}

describe('Kubernetes mode: cluster behaviour', () => {
  it('preemption evicts a whole victim gang, and binds the preemptor only after its pods are gone', async () => {
    const [low1, low2] = await fillWithLowGangs('');

    // Record the order of pod events: victim pods deleted vs. preemptor pods bound.
    const timeline: string[] = [];
    const seen = (kind: string) => (pod: V1Pod): void => {
      const job = pod.metadata?.labels?.['quartermaster.io/job-id'];
      timeline.push(`${kind}:${job}:${pod.spec?.nodeName ?? ''}`);
    };
    const watch: ResourceWatch<V1Pod> = await qm.cluster.watchPods({ onAdd: seen('add'), onUpdate: seen('update'), onDelete: seen('delete') });
    try {
      const high = await submit(gangBody({ name: 'high', priority: 100 }));
      await eventually('preemptor bound', () => allBound(high, 2));
      // The cheapest victim (lowest priority) lost both pods; the other gang kept its pods.
      await eventually('victim pods gone', async () => ((await qm.jobPods(low1)).length === 0 ? true : undefined));
      expect(await qm.jobPods(low2)).toHaveLength(2);
      const victim = await getJob(low1);
      expect(['PENDING', 'PREEMPTED']).toContain(victim.state);
      const lastVictimDelete = timeline.map((e, i) => (e.startsWith(`delete:${low1}`) ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
      // Its pods are made bound to their nodes (an `add` with a node), or bound later (an `update`).
      const firstPreemptorBind = timeline.findIndex((e) => (e.startsWith(`add:${high}:`) || e.startsWith(`update:${high}:`)) && !e.endsWith(':'));
      expect(timeline.filter((e) => e.startsWith(`delete:${low1}`))).toHaveLength(2);
      expect(lastVictimDelete).toBeGreaterThanOrEqual(0);
      expect(firstPreemptorBind).toBeGreaterThan(lastVictimDelete);
      // Clean up for the next tests.
      for (const id of [low1, low2, high]) await qm.ok('DELETE', `/v1/jobs/${id}`);
      await eventually('h100 pods gone', async () => ((await qm.cluster.listPods({ namespace: qm.namespace })).length === 0 ? true : undefined));
    } finally {
      await watch.stop();
    }
  }, 150_000);

  it('a victim pod stuck Terminating on a node the preemptor does not use does not hold back its bind', async () => {
    const [low1, low2] = await fillWithLowGangs('stuck-');
    // A finalizer keeps an evicted pod Terminating, as a dead kubelet that never confirms would.
    const finalizers = (name: string, list: string[]): Promise<unknown> =>
      qm.core.patchNamespacedPod({ name, namespace: qm.namespace, body: { metadata: { finalizers: list } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const victims = await qm.jobPods(low1);
    for (const pod of victims) await finalizers(pod.metadata!.name!, ['test.quartermaster.io/hold']);
    try {
      const high = await submit(gangBody({ name: 'stuck-high', priority: 100, replicas: 1 }));
      const node = await eventually('preemptor admitted', async () => (await getJob(high)).allocation?.[0]?.node);
      const [mine, elsewhere] = [victims.find((p) => p.spec?.nodeName === node)!, victims.find((p) => p.spec?.nodeName !== node)!];
      expect(mine).toBeDefined();
      expect(elsewhere).toBeDefined();
      await eventually('victims terminating', async () => ((await qm.jobPods(low1)).every((p) => p.metadata?.deletionTimestamp) ? true : undefined));
      await finalizers(mine.metadata!.name!, []); // the victim on the preemptor's node goes
      await eventually('preemptor bound while the other victim pod is still Terminating', () => allBound(high, 1));
      const still = await qm.cluster.getPod(elsewhere.metadata!.name!, qm.namespace);
      expect(still?.metadata?.deletionTimestamp).toBeDefined();
      for (const id of [low1, low2, high]) await qm.ok('DELETE', `/v1/jobs/${id}`);
    } finally {
      for (const pod of victims) await finalizers(pod.metadata!.name!, []).catch(() => undefined);
    }
    await eventually('h100 pods gone', async () => ((await qm.cluster.listPods({ namespace: qm.namespace })).length === 0 ? true : undefined));
  }, 150_000);

  it('a cordoned node loses its capacity; uncordoned, the waiting gang is bound', async () => {
    const a100Nodes = qm.nodes.filter((n) => n.includes('-a100-'));
    const cordon = (name: string, unschedulable: boolean): Promise<unknown> =>
      qm.core.patchNode({ name, body: { spec: { unschedulable } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await cordon(a100Nodes[0]!, true);
    await eventually('cordoned node unschedulable in Postgres', async () => {
      const node = (await qm.ok('GET', `/v1/nodes/${a100Nodes[0]}`)) as { schedulable: boolean };
      return node.schedulable === false ? true : undefined;
    });
    // 4 × 8 a100 GPUs need every a100 node; one is cordoned.
    const big = await submit(gangBody({ name: 'big', replicas: 4, flavors: ['a100'] }));
    expect(await judged(big)).toMatchObject({ state: 'PENDING', pending: { code: expect.any(String) } });
    expect(await qm.jobPods(big)).toHaveLength(0);
    await cordon(a100Nodes[0]!, false);
    await eventually('big gang bound after uncordon', () => allBound(big, 4));
    const nodes = new Set((await qm.jobPods(big)).map((p) => p.spec!.nodeName));
    expect(nodes.size).toBe(4);
    await qm.ok('DELETE', `/v1/jobs/${big}`);
    await eventually('big gang pods gone', async () => ((await qm.jobPods(big)).length === 0 ? true : undefined));
  }, 120_000);

  it('pods of other schedulers count as external usage of their node', async () => {
    const node = qm.nodes.find((n) => n.includes('-h100-'))!;
    await qm.core.createNamespacedPod({
      namespace: qm.namespace,
      body: { metadata: { name: 'foreign-user-pod' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '3' } } }] } },
    });
    await eventually('external usage synced', async () => {
      const row = (await qm.ok('GET', `/v1/nodes/${node}`)) as { external?: { accelerators: number } };
      return row.external?.accelerators === 3 ? true : undefined;
    });
    await qm.core.deleteNamespacedPod({ name: 'foreign-user-pod', namespace: qm.namespace, gracePeriodSeconds: 0 });
    await eventually('external usage released', async () => {
      const row = (await qm.ok('GET', `/v1/nodes/${node}`)) as { external?: { accelerators: number } };
      return row.external?.accelerators === 0 ? true : undefined;
    });
  }, 60_000);

  it('annotated foreign pods are imported as one gang and bound together; an unplaceable gang gets none bound', async () => {
    const foreign = (name: string, gang: string, size: number, gpus: number): V1Pod => ({
      metadata: {
        name,
        namespace: qm.namespace,
        annotations: { 'quartermaster.io/team': 'nlp', 'quartermaster.io/gang': gang, 'quartermaster.io/gang-size': String(size), 'quartermaster.io/flavor': 'a100' },
      },
      spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
    });
    const create = (pod: V1Pod): Promise<V1Pod> => qm.core.createNamespacedPod({ namespace: qm.namespace, body: pod });
    await create(foreign('imp-0', 'imp', 3, 4));
    await create(foreign('imp-1', 'imp', 3, 4));
    // Incomplete: an import pass saw it (its pods say they wait for the gang), not imported, nothing bound.
    await eventually('import pass reported the incomplete gang', async () => {
      const pods = await qm.cluster.listPods({ namespace: qm.namespace });
      const waiting = (p: V1Pod): boolean => (p.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'WaitingForGang');
      return pods.length === 2 && pods.every(waiting) ? true : undefined;
    });
    const incomplete = await qm.cluster.listPods({ namespace: qm.namespace });
    expect(incomplete.every((p) => !p.spec?.nodeName && !p.metadata?.labels?.['quartermaster.io/job-id'])).toBe(true);
    await create(foreign('imp-2', 'imp', 3, 4));
    const jobId = await eventually('gang imported', async () => {
      const pods = await qm.cluster.listPods({ namespace: qm.namespace, labelSelector: 'quartermaster.io/job-id' });
      const ids = new Set(pods.map((p) => p.metadata!.labels!['quartermaster.io/job-id']));
      return pods.length === 3 && ids.size === 1 ? [...ids][0] : undefined;
    });
    await eventually('imported gang bound', () => allBound(jobId, 3));
    const job = await getJob(jobId);
    expect(job).toMatchObject({ state: 'BINDING' });
    expect(job.allocation).toHaveLength(3);

    // 5 × 8 a100 GPUs can never fit in 4 nodes: imported, but none of its pods is bound.
    for (let i = 0; i < 5; i++) await create(foreign(`huge-${i}`, 'huge', 5, 8));
    const hugeId = await eventually('huge gang imported', async () => {
      const pods = await qm.cluster.listPods({ namespace: qm.namespace, labelSelector: 'quartermaster.io/job-id' });
      const huge = pods.filter((p) => p.metadata!.name!.startsWith('huge-'));
      return huge.length === 5 ? huge[0]!.metadata!.labels!['quartermaster.io/job-id'] : undefined;
    });
    expect(await judged(hugeId)).toMatchObject({ state: 'PENDING', pending: { code: 'UNSATISFIABLE' } });
    expect((await qm.jobPods(hugeId)).filter((p) => p.spec?.nodeName)).toHaveLength(0);
  }, 120_000);

  it('a departed Node leaves the nodes table; the gang holding one is requeued and placed on a node that exists, and the row goes once released', async () => {
    type NodeRow = { name: string; schedulable: boolean };
    const listed = async (): Promise<NodeRow[]> => ((await qm.ok('GET', '/v1/nodes')) as { items: NodeRow[] }).items;
    const id = await submit(gangBody({ name: 'on-departing', replicas: 1 }));
    await eventually('bound', () => allBound(id, 1));
    const held = (await qm.jobPods(id))[0]!.spec!.nodeName!;
    const idle = qm.nodes.find((n) => n.includes('-h100-') && n !== held)!;

    await qm.core.deleteNode({ name: idle });
    await eventually('idle node row gone', async () => ((await listed()).some((n) => n.name === idle) ? undefined : true));

    // No kubelet or pod GC here: the pod stays, bound to the departed node, and would never run. The gang is
    // requeued because its Node is gone, and placed again on a node that exists.
    await qm.core.deleteNode({ name: held });
    const requeued = await eventually('requeued: its node left the cluster', async () => {
      const body = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: { kind: string; message: string }[] } | { kind: string; message: string }[];
      return (Array.isArray(body) ? body : (body.items ?? [])).find((e) => e.kind === 'job.requeued');
    });
    expect(requeued.message).toContain(`node ${held} left the cluster; gang requeued`);
    const again = await eventually('bound again', async () => {
      const job = await getJob(id);
      return job.state !== 'PENDING' && job.allocation?.length === 1 && (await allBound(id, 1)) ? job : undefined;
    });
    expect([held, idle]).not.toContain(again.allocation![0]!.node);
    await eventually('held node row gone once released', async () => ((await listed()).some((n) => n.name === held) ? undefined : true), 30_000);
    await qm.ok('DELETE', `/v1/jobs/${id}`);
  }, 120_000);
});
