// With QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS=charge, an accelerator pod that kube-scheduler (Quartermaster as its
// extender, deploy/kube-scheduler/config.yaml) schedules and that names no gang is charged to a team: its namespace's,
// or the one its quartermaster.io/team label names there. It is imported as that team's one-pod job and bound by
// kube-scheduler where the job was allocated; one charged to nobody (a namespace of no team, or of several) waits
// with the reason as an Event and is never bound. Pods without accelerators are scheduled as usual.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { uniqueName } from './support/cluster.js';
import { readRepoFile, startKubeScheduler, type RunningKubeScheduler } from './support/kube-scheduler.js';
import { eventually, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
let kubeScheduler: RunningKubeScheduler;
const speech = uniqueName('speech');
const sandbox = uniqueName('sandbox');

beforeAll(async () => {
  qm = await startQm('qm-lone', 2, { QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS: 'charge' }, { extender: true });
  // vision and nlp both take the test's namespace; `speech` alone takes its own; `sandbox` is nobody's.
  await seedTenancy(qm);
  for (const namespace of [speech, sandbox]) await qm.core.createNamespace({ body: { metadata: { name: namespace } } });
  await qm.ok('PUT', '/v1/teams/speech', { cohort: 'research', namespaces: [speech] });
  await qm.ok('PUT', '/v1/teams/speech/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
  await eventually('4 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 4 ? true : undefined;
  });
  kubeScheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
    const [extender] = config.extenders as Record<string, unknown>[];
    extender!.urlPrefix = `${qm.schedulerUrl}/extender`;
  });
}, 180_000);

afterAll(async () => {
  for (const namespace of [speech, sandbox]) {
    const pods = await qm.core.listNamespacedPod({ namespace }).catch(() => ({ items: [] as V1Pod[] }));
    await Promise.all(pods.items.map((p) => qm.core.deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => undefined)));
  }
  await kubeScheduler?.stop();
  await qm?.close();
}, 120_000);

/** A pod as an inference Deployment or a user's manifest makes it: no gang annotations, default scheduler. */
const lonePod = (name: string, gpus: number, labels: Record<string, string> = {}): V1Pod => ({
  metadata: { name, labels },
  spec: {
    nodeSelector: { 'nvidia.com/gpu.product': qm.a100Product },
    containers: [{ name: 'c', image: 'x', resources: gpus > 0 ? { limits: { 'nvidia.com/gpu': String(gpus) } } : { requests: { cpu: '100m' } } }],
  },
});
const create = (namespace: string, pod: V1Pod): Promise<V1Pod> => qm.core.createNamespacedPod({ namespace, body: pod });
const pod = (namespace: string, name: string): Promise<V1Pod> => qm.core.readNamespacedPod({ namespace, name });
type Job = { id: string; team: string; state: string; replicas: number; acceleratorsPerReplica: number; allocation?: { replica: number; node: string }[] };

describe('lone accelerator pods under kube-scheduler with Quartermaster as extender', () => {
  it("charges a pod to its namespace's one team, or to the team its label names there: imported as a one-pod job and bound where allocated", async () => {
    await create(speech, lonePod('whisper-0', 4));
    await create(qm.namespace, lonePod('vit-eval-0', 2, { 'quartermaster.io/team': 'vision' }));
    for (const [namespace, name, team, gpus] of [[speech, 'whisper-0', 'speech', 4], [qm.namespace, 'vit-eval-0', 'vision', 2]] as const) {
      const bound = await eventually(`${namespace}/${name} bound`, async () => {
        const p = await pod(namespace, name);
        return p.spec?.nodeName ? p : undefined;
      }, 90_000);
      const jobId = bound.metadata!.labels!['quartermaster.io/job-id']!;
      const job = (await qm.ok('GET', `/v1/jobs/${jobId}`)) as Job;
      expect(job).toMatchObject({ team, replicas: 1, acceleratorsPerReplica: gpus });
      expect(bound.spec?.nodeName).toBe(job.allocation![0]!.node);
      expect(bound.spec?.schedulerName).toBe('default-scheduler');
    }
    // The extender held them back until they were imported.
    expect(kubeScheduler.logs()).toContain('not imported yet as a one-pod job of team');
  }, 180_000);

  it('refuses a pod charged to nobody — its namespace is no team\'s, or several teams\', and it names none — with the reason, and never binds it', async () => {
    await create(sandbox, lonePod('stray-0', 1));
    await create(qm.namespace, lonePod('shared-0', 1));
    await create(qm.namespace, lonePod('cpu-only-0', 0));
    // Pods without accelerators are kube-scheduler's as always.
    await eventually('the CPU pod bound', async () => ((await pod(qm.namespace, 'cpu-only-0')).spec?.nodeName ? true : undefined), 90_000);
    const reasons = async (namespace: string, name: string): Promise<string[]> => {
      const events = await qm.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
      return events.items.filter((e: CoreV1Event) => e.reason === 'NoTeam').map((e) => e.message ?? '');
    };
    const [stray] = await eventually('stray-0 told why', async () => ((await reasons(sandbox, 'stray-0')).length > 0 ? reasons(sandbox, 'stray-0') : undefined));
    expect(stray).toContain(`namespace ${sandbox} belongs to no team`);
    const [shared] = await eventually('shared-0 told why', async () => ((await reasons(qm.namespace, 'shared-0')).length > 0 ? reasons(qm.namespace, 'shared-0') : undefined));
    expect(shared).toContain(`namespace ${qm.namespace} belongs to several teams (nlp, vision)`);
    // kube-scheduler asked the extender about them and was refused the same way; nothing bound, no job made.
    await eventually('kube-scheduler refused', () => Promise.resolve(kubeScheduler.logs().includes(`namespace ${sandbox} belongs to no team`) ? true : undefined));
    for (const [namespace, name] of [[sandbox, 'stray-0'], [qm.namespace, 'shared-0']] as const) {
      const p = await pod(namespace, name);
      expect(p.spec?.nodeName).toBeUndefined();
      expect(p.metadata?.labels?.['quartermaster.io/job-id']).toBeUndefined();
    }
  }, 180_000);
});
