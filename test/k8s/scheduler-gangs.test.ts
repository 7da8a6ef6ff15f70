// Kubernetes mode end to end: gangs submitted over REST become pods bound by Quartermaster to the nodes
// of their allocation, within node capacity; pod phases drive job states; cancel deletes the pods;
// restarting the scheduler re-binds nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-gangs');
  await seedTenancy(qm);
  await eventually('8 nodes synced into Postgres', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { name: string; source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

function gpusByNode(pods: V1Pod[]): Map<string, number> {
  const used = new Map<string, number>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    const gpus = Number(pod.spec?.containers[0]?.resources?.limits?.['nvidia.com/gpu'] ?? 0);
    used.set(node, (used.get(node) ?? 0) + gpus);
  }
  return used;
}

describe('Kubernetes mode: gangs over REST', () => {
  const jobs: string[] = [];

  it('binds every pod of every admitted gang to its allocated node, within capacity, and follows pod phases', async () => {
    // 4 h100 nodes × 8 = 32 GPUs: two 2×8 gangs fit; a third waits.
    for (let i = 0; i < 3; i++) {
      const job = (await qm.ok('POST', '/v1/jobs', gangBody({ name: `g${i}`, flavors: ['h100'] }))) as { id: string };
      jobs.push(job.id);
    }
    const a100 = (await qm.ok('POST', '/v1/jobs', gangBody({ name: 'small', replicas: 3, acceleratorsPerReplica: 4, flavors: ['a100'] }))) as { id: string };
    jobs.push(a100.id);

    const bound = async (id: string): Promise<V1Pod[] | undefined> => {
      const pods = await qm.jobPods(id);
      const job = (await qm.ok('GET', `/v1/jobs/${id}`)) as { allocation?: { replica: number; node: string }[] };
      if (!job.allocation || job.allocation.length === 0) return undefined;
      if (pods.length !== job.allocation.length || pods.some((p) => !p.spec?.nodeName)) return undefined;
      for (const a of job.allocation) {
        const pod = pods.find((p) => p.metadata?.labels?.['quartermaster.io/replica'] === String(a.replica));
        expect(pod?.spec?.nodeName).toBe(a.node);
      }
      return pods;
    };
    await eventually('first two h100 gangs bound', async () => ((await bound(jobs[0]!)) && (await bound(jobs[1]!)) ? true : undefined));
    await eventually('a100 gang bound', () => bound(jobs[3]!));
    const allPods = await qm.cluster.listPods({ namespace: qm.namespace });
    for (const [, gpus] of gpusByNode(allPods)) expect(gpus).toBeLessThanOrEqual(8);
    expect(await qm.jobPods(jobs[2]!)).toHaveLength(0);
    const third = (await qm.ok('GET', `/v1/jobs/${jobs[2]}`)) as { state: string };
    expect(third.state).toBe('PENDING');
    for (const id of [jobs[0], jobs[1], jobs[3]]) {
      const job = (await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string };
      expect(job.state).toBe('BINDING');
    }

    // The "kubelet" starts the pods: every gang becomes RUNNING.
    await qm.kubelet();
    for (const id of [jobs[0], jobs[1], jobs[3]]) {
      await eventually(`job ${id} RUNNING`, async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    }
  }, 120_000);

  it('restarting the scheduler re-binds nothing', async () => {
    const before = await qm.cluster.listPods({ namespace: qm.namespace });
    const fingerprint = (pods: V1Pod[]): string[] => pods.map((p) => `${p.metadata?.name}/${p.metadata?.uid}/${p.spec?.nodeName}/${p.metadata?.resourceVersion}`).sort();
    type Status = { leader: { fencingToken: number } | null; lastCycle: { number: number } | null };
    const status = async (): Promise<Status> => (await qm.ok('GET', '/v1/scheduler')) as Status;
    const token = (await status()).leader?.fencingToken ?? 0;
    await qm.restartScheduler();
    // The restarted scheduler leads (a new fencing token) and has run several cycles, its first one with
    // the outbox repair pass before it.
    const first = await eventually('restarted scheduler leads', async () => {
      const s = await status();
      return s.leader && s.leader.fencingToken > token && s.lastCycle ? s.lastCycle.number : undefined;
    });
    await eventually('three cycles since', async () => ((await status()).lastCycle!.number >= first + 3 ? true : undefined));
    const after = await qm.cluster.listPods({ namespace: qm.namespace });
    expect(fingerprint(after)).toEqual(fingerprint(before));
  }, 60_000);

  it('a succeeded gang frees its nodes for the waiting one; cancel deletes pods', async () => {
    for (const pod of await qm.jobPods(jobs[0]!)) await qm.cluster.patchPodStatus(pod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    await eventually('job 0 SUCCEEDED', async () => (((await qm.ok('GET', `/v1/jobs/${jobs[0]}`)) as { state: string }).state === 'SUCCEEDED' ? true : undefined));
    await eventually('waiting gang bound', async () => {
      const pods = await qm.jobPods(jobs[2]!);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName) ? true : undefined;
    });
    await qm.ok('DELETE', `/v1/jobs/${jobs[2]}`);
    await eventually('cancelled gang pods deleted', async () => ((await qm.jobPods(jobs[2]!)).length === 0 ? true : undefined));
  }, 120_000);

  it('a failed replica fails the whole gang and its other pods are deleted', async () => {
    const pods = await qm.jobPods(jobs[1]!);
    await qm.cluster.patchPodStatus(pods[0]!.metadata!.name!, { phase: 'Failed' }, qm.namespace);
    await eventually('job 1 FAILED', async () => (((await qm.ok('GET', `/v1/jobs/${jobs[1]}`)) as { state: string }).state === 'FAILED' ? true : undefined));
    await eventually('failed gang pods removed', async () => ((await qm.jobPods(jobs[1]!)).length === 0 ? true : undefined));
  }, 120_000);
});
