// Imported gangs (annotated pods Quartermaster did not create) that lose a pod do not become zombies.
// Policy: Quartermaster cannot re-create pods it does not own, so a gang that loses a pod (deleted, node
// gone, preempted) ends — FAILED with the reason —, its allocation is released and its surviving pods are
// deleted; pods its owner re-creates are imported as a new job.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { LABEL_JOB_ID } from '#kube';
import { GangImporter } from '../../apps/scheduler/src/kubernetes/gang-importer.js';
import { KubeJobStore } from '../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;

beforeAll(async () => {
  qm = await startQm('qm-imported', 2);
  await seedTenancy(qm);
  await eventually('4 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 4 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

type Job = { id: string; state: string; allocation?: unknown[] };
const getJob = async (id: string): Promise<Job> => (await qm.ok('GET', `/v1/jobs/${id}`)) as Job;
const transitions = async (id: string): Promise<string> => JSON.stringify(await qm.ok('GET', `/v1/jobs/${id}/events`));

async function importedRunningGang(gang: string, size: number, gpus: number): Promise<{ jobId: string; pods: string[] }> {
  const names = Array.from({ length: size }, (_, i) => `${gang}-${i}`);
  for (const name of names) {
    const pod: V1Pod = {
      metadata: {
        name,
        annotations: {
          'quartermaster.io/team': 'nlp',
          'quartermaster.io/gang': gang,
          'quartermaster.io/gang-size': String(size),
          'quartermaster.io/flavor': 'a100',
        },
      },
      spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
    };
    await qm.core.createNamespacedPod({ namespace: qm.namespace, body: pod });
  }
  const jobId = await eventually(`gang ${gang} imported and bound`, async () => {
    const pods = await Promise.all(names.map((n) => qm.cluster.getPod(n, qm.namespace)));
    const id = pods[0]?.metadata?.labels?.['quartermaster.io/job-id'];
    return id && pods.every((p) => p?.spec?.nodeName) ? id : undefined;
  });
  await qm.kubelet();
  await eventually(`gang ${gang} running`, async () => ((await getJob(jobId)).state === 'RUNNING' ? true : undefined));
  return { jobId, pods: names };
}

describe('imported gangs that lose a pod', () => {
  it('a running imported gang whose pod is deleted ends: FAILED with the reason, allocation released, the surviving pod deleted', async () => {
    const { jobId, pods } = await importedRunningGang('lossy', 2, 4);
    await qm.core.deleteNamespacedPod({ name: pods[0]!, namespace: qm.namespace, gracePeriodSeconds: 0 });

    const job = await eventually('job ended', async () => {
      const j = await getJob(jobId);
      return j.state === 'FAILED' ? j : undefined;
    });
    expect(job.allocation ?? []).toEqual([]);
    expect(await transitions(jobId)).toContain(`imported gang replica 0 lost`);
    expect(await transitions(jobId)).toContain('cannot re-create pods it does not own');
    await eventually('surviving pod deleted', async () => ((await qm.cluster.getPod(pods[1]!, qm.namespace)) === null ? true : undefined));
    // Not admitted again: no zombie cycling admitted → binding → gang timeout.
    expect((await qm.ok('GET', `/v1/jobs/${jobId}`)) as Job).toMatchObject({ state: 'FAILED' });
  }, 120_000);

  it('a preempted imported gang ends once its pods are evicted, instead of waiting in the queue for pods that will never come back', async () => {
    const { jobId, pods } = await importedRunningGang('victim', 2, 8);
    // Both a100 nodes are the gang's; a REST gang of higher priority of the same team takes them.
    await qm.ok('PUT', '/v1/teams/nlp/quotas/a100', { nominal: 32, borrowingLimit: 0, lendingLimit: null });
    const high = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'takes-all', team: 'nlp', priority: 100, flavors: ['a100'] }))) as { id: string }).id;
    await eventually('preemptor bound', async () => {
      const bound = (await qm.jobPods(high)).filter((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp);
      return bound.length === 2 ? true : undefined;
    });
    const job = await eventually('imported victim ended', async () => {
      const j = await getJob(jobId);
      return j.state === 'FAILED' ? j : undefined;
    });
    expect(job.allocation ?? []).toEqual([]);
    expect(await transitions(jobId)).toContain('was preempted');
    for (const pod of pods) expect(await qm.cluster.getPod(pod, qm.namespace)).toBeNull();
  }, 120_000);
});

describe('the gang importer ahead of its watch', () => {
  it("a pass that sees a gang's pods before the watch shows the labels it patched does not import the gang again", async () => {
    const names = ['stale-gang-0', 'stale-gang-1'];
    for (const name of names) {
      await qm.core.createNamespacedPod({
        namespace: qm.namespace,
        body: {
          metadata: { name, annotations: { 'quartermaster.io/team': 'nlp', 'quartermaster.io/gang': 'stale-gang', 'quartermaster.io/gang-size': '2', 'quartermaster.io/flavor': 'a100' } },
          spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
        },
      });
    }
    // The view a lagging watch gives: the pods as created, unbound and unlabelled (every pass sees it).
    const stale = (await Promise.all(names.map((n) => qm.cluster.getPod(n, qm.namespace)))).map((pod) => {
      const copy = structuredClone(pod!);
      delete copy.metadata!.labels?.[LABEL_JOB_ID];
      delete copy.spec!.nodeName;
      return copy;
    });
    /** The real store, counting the gang submissions made through it (each followed by a label patch per pod). */
    class CountingStore extends KubeJobStore {
      submissions = 0;
      override submitter(): ReturnType<KubeJobStore['submitter']> {
        this.submissions++;
        return super.submitter();
      }
    }
    const store = new CountingStore(qm.api.database);
    const importer = new GangImporter(qm.cluster, store, 0, () => undefined, pino({ level: 'silent' }), null, undefined, () => Promise.resolve(stale));
    try {
      expect(await importer.runOnce()).toHaveLength(1);
      expect(store.submissions).toBe(1);
      await importer.runOnce();
      expect(store.submissions).toBe(1);
    } finally {
      await importer.stop();
    }
  }, 180_000);
});
