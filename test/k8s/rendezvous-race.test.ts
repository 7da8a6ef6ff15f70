// The rendezvous Service of a multi-pod REST job and the side effects that race over it, on a real API server.
// Side effects of one job run concurrently (any worker, any order), so a job can be cancelled while its bind is
// making its pods: if the cancel's `delete` ran before the bind created the Service and pods, nothing removed
// them (a Service, and pods of a cancelled job, left for good). And a requeued job admitted again while its
// `delete` ran could lose the Service its new bind found. Each interleaving is played exactly: the scheduler
// and its workers are stopped, and the test runs the real handlers over the real store and cluster, with
// the other side effect run at the point where the race puts it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '#common';
import { KubeCluster, apiStatusOf, rendezvousServiceName } from '#kube';
import type { AnySideEffectHandler } from '#scheduling';
import { KubeJobStore, type BindTarget } from '../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { kubernetesSettingsFromEnv } from '../../apps/scheduler/src/kubernetes/kubernetes-settings.js';
import { kubernetesSideEffectHandlers } from '../../apps/scheduler/src/kubernetes/pod-side-effects.js';
import { testKubeConfig } from './support/cluster.js';
import { eventually, gangBody, kubeTestEnv, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

/** The real store; `interleave` runs once, right after the next bindTarget read (where the race strikes). */
class InterleavedStore extends KubeJobStore {
  interleave: (() => Promise<void>) | undefined;
  override async bindTarget(jobId: string): Promise<BindTarget | null> {
    const target = await super.bindTarget(jobId);
    const run = this.interleave;
    this.interleave = undefined;
    await run?.();
    return target;
  }
}

/** The real cluster client; `interleave` runs once, right after the next pod deletion returns. */
class InterleavedCluster extends KubeCluster {
  interleave: (() => Promise<void>) | undefined;
  override async deletePod(...args: Parameters<KubeCluster['deletePod']>): ReturnType<KubeCluster['deletePod']> {
    const result = await super.deletePod(...args);
    const run = this.interleave;
    this.interleave = undefined;
    await run?.();
    return result;
  }
}

beforeAll(async () => {
  qm = await startQm('qm-rdzv-race', 2);
  await seedTenancy(qm);
  await eventually('4 nodes synced', async () => ((((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items.length === 4) ? true : undefined));
}, 30 * 60_000);

/** Handler sets made by the tests: their bind handler's pod watch is closed at the end. */
const made: AnySideEffectHandler[][] = [];

afterAll(async () => {
  for (const all of made) await Promise.all(all.map((h) => (h.close ? h.close() : Promise.resolve())));
  await qm?.close();
}, 120_000);

const serviceOf = async (id: string): Promise<unknown> => {
  try {
    return await qm.core.readNamespacedService({ name: rendezvousServiceName(id), namespace: qm.namespace });
  } catch (error) {
    if (apiStatusOf(error) === 404) return null;
    throw error;
  }
};
const state = async (id: string): Promise<string> => ((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state;

/** The Kubernetes handlers as the scheduler's worker builds them, over `store`. */
function handlers(store: KubeJobStore, cluster: KubeCluster = qm.cluster): { bind: (jobId: string) => Promise<void>; delete: (jobId: string) => Promise<void> } {
  const settings = kubernetesSettingsFromEnv(kubeTestEnv('race', qm.namespace));
  const all = kubernetesSideEffectHandlers(cluster, store, settings, createLogger('silent'));
  made.push(all);
  const of = (name: string): AnySideEffectHandler => all.find((h) => h.name === name)!;
  return {
    bind: (jobId) => (of('bind') as Extract<AnySideEffectHandler, { name: 'bind' }>).handle({ jobId }, { outboxId: '0', attempt: 1 }),
    delete: (jobId) => (of('delete') as Extract<AnySideEffectHandler, { name: 'delete' }>).handle({ jobId }, { outboxId: '0', attempt: 1 }),
  };
}

describe("races over a gang's rendezvous Service", () => {
  it("a job cancelled while its bind makes its pods loses its pods and Service (its delete ran before they existed)", async () => {
    await qm.restartScheduler(async () => {
      const store = new InterleavedStore(qm.api.database);
      const run = handlers(store);
      const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'cancelled-mid-bind', replicas: 2 }))) as { id: string }).id;
      await qm.ok('POST', '/v1/scheduler/cycles');
      expect(await state(id)).toBe('ADMITTED');
      // The bind has read the job (ADMITTED); now it is cancelled and its delete runs to the end, finding nothing.
      store.interleave = async () => {
        await qm.ok('DELETE', `/v1/jobs/${id}`);
        await run.delete(id);
        expect([await qm.jobPods(id), await serviceOf(id)]).toEqual([[], null]);
      };
      await run.bind(id);
      expect(await state(id)).toBe('CANCELLED');
      // Nothing of the cancelled job is left in the cluster.
      expect((await qm.jobPods(id)).filter((p) => !p.metadata?.deletionTimestamp)).toEqual([]);
      expect(await serviceOf(id)).toBeNull();
    });
  }, 180_000);

  it('a requeued job admitted and bound again while its delete runs keeps the Service its new pods rely on', async () => {
    await qm.restartScheduler(async () => {
      const store = new KubeJobStore(qm.api.database);
      const cluster = new InterleavedCluster(testKubeConfig(), { namespace: qm.namespace });
      const run = handlers(store, cluster);
      const id = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'requeued', replicas: 2 }))) as { id: string }).id;
      await qm.ok('POST', '/v1/scheduler/cycles');
      await run.bind(id);
      expect(await serviceOf(id)).not.toBeNull();
      // Requeued (as a placement conflict or a lost replica does). Its delete removes the old pods; before it
      // goes on to the Service, the job is admitted again and its new bind runs to the end, finding the Service.
      expect(await store.requeue(id, 'test: requeued')).toBe(true);
      cluster.interleave = async () => {
        await eventually('old pods gone', async () => ((await qm.jobPods(id)).length === 0 ? true : undefined));
        await qm.ok('POST', '/v1/scheduler/cycles');
        await run.bind(id);
        expect((await qm.jobPods(id)).filter((p) => p.spec?.nodeName)).toHaveLength(2);
      };
      await run.delete(id);
      expect(cluster.interleave).toBeUndefined(); // the interleaving happened
      expect(await state(id)).toBe('BINDING');
      expect((await qm.jobPods(id)).filter((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp)).toHaveLength(2);
      expect(await serviceOf(id)).not.toBeNull();
      await qm.ok('DELETE', `/v1/jobs/${id}`);
      await run.delete(id);
      expect(await serviceOf(id)).toBeNull();
    });
  }, 180_000);
});
