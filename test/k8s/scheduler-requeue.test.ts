// QM_KUBE_REPLICA_FAILURE=requeue: a Failed replica sends the whole gang back to PENDING, its pods are
// removed, and the gang is admitted and bound again (fresh pods, same deterministic names).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-requeue', 3, { QM_KUBE_REPLICA_FAILURE: 'requeue', QM_REQUEUE_BACKOFF_BASE_MS: '100', QM_REQUEUE_BACKOFF_MAX_MS: '200' });
  await seedTenancy(qm);
  await eventually('6 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 6 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

describe('replica failure policy requeue', () => {
  it('requeues the gang whole and binds it again', async () => {
    const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'rq' }))) as { id: string }).id;
    const bound = async (): Promise<string[] | undefined> => {
      const pods = await qm.jobPods(id);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp) ? pods.map((p) => p.metadata!.uid!) : undefined;
    };
    const first = await eventually('gang bound', bound);
    await qm.kubelet();
    await eventually('running', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    const [victim] = await qm.jobPods(id);
    await qm.cluster.patchPodStatus(victim!.metadata!.name!, { phase: 'Failed' }, qm.namespace);
    const again = await eventually('bound again with fresh pods', async () => {
      const uids = await bound();
      return uids && uids.every((uid) => !first.includes(uid)) ? uids : undefined;
    }, 60_000);
    expect(again).toHaveLength(2);
    const events = ((await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: { kind: string }[] } | { kind: string }[]);
    const kinds = (Array.isArray(events) ? events : (events.items ?? [])).map((e) => e.kind);
    expect(kinds).toContain('job.requeued');
  }, 120_000);

  it('requeues a running gang whose pod was deleted (a drain or a removed node), and binds it again', async () => {
    const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'drained', flavors: ['a100'] }))) as { id: string }).id;
    const live = async (): Promise<string[] | undefined> => {
      const pods = await qm.jobPods(id);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp) ? pods.map((p) => p.metadata!.uid!) : undefined;
    };
    const first = await eventually('gang bound', live);
    await qm.kubelet();
    await eventually('running', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    // Not Failed, just gone: what pod GC does to the pods of a deleted Node.
    const [victim] = await qm.jobPods(id);
    await qm.core.deleteNamespacedPod({ name: victim!.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    const again = await eventually('bound again with fresh pods', async () => {
      const uids = await live();
      return uids && uids.every((uid) => !first.includes(uid)) ? uids : undefined;
    }, 60_000);
    expect(again).toHaveLength(2);
    const events = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: { kind: string; reason?: string; message?: string }[] } | { kind: string }[];
    const list = Array.isArray(events) ? events : (events.items ?? []);
    expect(list.map((e) => e.kind)).toContain('job.requeued');
    expect(JSON.stringify(list)).toMatch(/replica \d lost: its pod was deleted/);
    await qm.kubelet();
    await eventually('running again', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
  }, 120_000);

  it('does not count a Succeeded replica whose pod was deleted as lost: the gang runs on, then succeeds', async () => {
    const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'half-done', flavors: ['a100'], acceleratorsPerReplica: 4 }))) as { id: string }).id;
    await eventually('gang bound', async () => {
      const pods = await qm.jobPods(id);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName) ? true : undefined;
    });
    await qm.kubelet();
    await eventually('running', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    const [done, other] = await qm.jobPods(id);
    await qm.cluster.patchPodStatus(done!.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    // A TTL controller or a cleanup script removes the finished pod while its sibling still runs.
    await eventually('finished pod seen Succeeded', async () =>
      (await qm.jobPods(id)).some((p) => p.metadata!.name === done!.metadata!.name && p.status?.phase === 'Succeeded') ? true : undefined,
    );
    await qm.core.deleteNamespacedPod({ name: done!.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    await eventually('finished pod gone', async () => ((await qm.jobPods(id)).length === 1 ? true : undefined));
    await qm.cluster.patchPodStatus(other!.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    await eventually('succeeded', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'SUCCEEDED' ? true : undefined), 30_000);
    const events = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: { kind: string }[] } | { kind: string }[];
    expect((Array.isArray(events) ? events : (events.items ?? [])).map((e) => e.kind)).not.toContain('job.requeued');
  }, 120_000);

  it('requeues, at start, a running gang whose pods all went away while nothing watched', async () => {
    const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'vanished', flavors: ['a100'], replicas: 1 }))) as { id: string }).id;
    await eventually('bound', async () => ((await qm.jobPods(id)).some((p) => p.spec?.nodeName) ? true : undefined));
    await qm.kubelet();
    await eventually('running', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    await qm.restartScheduler(async () => {
      for (const pod of await qm.jobPods(id)) await qm.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: qm.namespace, gracePeriodSeconds: 0 });
    });
    await eventually('requeued and bound again', async () => {
      const events = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items?: unknown[] } | unknown[];
      const requeued = JSON.stringify(Array.isArray(events) ? events : (events.items ?? [])).includes('replica 0 lost');
      return requeued && (await qm.jobPods(id)).some((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp) ? true : undefined;
    }, 60_000);
  }, 120_000);
});
