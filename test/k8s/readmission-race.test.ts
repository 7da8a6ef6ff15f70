// A workload gang requeued (its Node left the cluster, say) and admitted again at once, before the side-effect
// worker took its `delete`: the new admission's bind must not take the old run's pods — bound to the nodes of the
// earlier admission — for its own, and the `delete` must not skip the workload because its job holds again. The
// interleavings are played exactly: the scheduler and its workers are stopped, and the test carries out the real
// outbox entries (processOutboxEntry over the real handlers, store and cluster) in the order the race puts them.
// Real Job controller (kube-controller-manager); the test plays the kubelet.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, BatchV1Api, type V1Job } from '@kubernetes/client-node';
import { createLogger } from '#common';
import { NotReadyYetError, PgOutboxStore, SideEffectHandlerRegistry, processOutboxEntry } from '#scheduling';
import { replicaOfPod } from '#kube';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam } from './controllers/examples.js';
import { eventually, kubeTestEnv, type QmEnv } from './scheduler-harness.js';
import { applyManifest, boundPods, deleteManifest, live, podsOf, runKubelet, startWorkloadSuite, stopWorkloadSuite, workloadJob } from './support/workloads.js';
import { KubeJobStore } from '../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { kubernetesSettingsFromEnv } from '../../apps/scheduler/src/kubernetes/kubernetes-settings.js';
import { kubernetesSideEffectHandlers } from '../../apps/scheduler/src/kubernetes/pod-side-effects.js';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100: 2 nodes × 8, nlp's.
  ({ qm, controllers } = await startWorkloadSuite('wl-readmit', ['kube-controller-manager'], 2, 0));
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

/** An indexed Job of 2 pods with 8 GPUs each on h100, bound by Quartermaster. */
function gpuJob(name: string) {
  const job = forTeam(examples.indexedJob(), { team: 'nlp', name, schedulerName: 'quartermaster', limits: { 'nvidia.com/gpu': '8' } });
  job.spec.completions = 2;
  job.spec.parallelism = 2;
  job.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  return job;
}

interface Race {
  /** One delivery of the outbox entry by a worker: 'done', or 'not-ready' when its handler asked to be looked at again. */
  deliver(id: string): Promise<'done' | 'already-done' | 'missing' | 'not-ready'>;
  /** The requeue's `delete` entry and the new admission's `bind` entry. */
  remove: string;
  bind: string;
}

/**
 * With the scheduler, its worker and watchers stopped: the job is requeued (as the node sync requeues a gang whose
 * Node left, with no delay) and admitted again at once by a cycle; `play` carries out its `delete` and new `bind`
 * entries in the order it chooses. The scheduler comes back after it.
 */
async function race(jobId: string, play: (race: Race) => Promise<void>): Promise<void> {
  await qm.restartScheduler(async () => {
    const store = new KubeJobStore(qm.api.database);
    const outbox = new PgOutboxStore(qm.api.database.pool);
    const settings = kubernetesSettingsFromEnv(kubeTestEnv('readmit', qm.namespace));
    const registry = SideEffectHandlerRegistry.create(kubernetesSideEffectHandlers(qm.cluster, store, settings, createLogger('silent')));
    try {
      expect(await store.requeue(jobId, 'test: node left the cluster; gang requeued')).toBe(true);
      await qm.ok('POST', '/v1/scheduler/cycles');
      expect(((await qm.ok('GET', `/v1/jobs/${jobId}`)) as { state: string }).state).toBe('ADMITTED');
      const entries = await Promise.all((await outbox.listDue(new Date(), 1000)).map((ref) => outbox.get(ref.id)));
      const ofJob = (kind: string): string => entries.find((e) => e?.kind === kind && (e.payload as { jobId: string }).jobId === jobId)!.id;
      const deliver: Race['deliver'] = (id) =>
        processOutboxEntry(outbox, registry, id, 1).catch((error: unknown) => {
          if (error instanceof NotReadyYetError) return 'not-ready' as const;
          throw error;
        });
      await play({ deliver, remove: ofJob('delete'), bind: ofJob('bind') });
    } finally {
      await registry.close();
    }
  });
}

/**
 * True once the job binds 2 live pods of its Job, each on its replica's node; throws while a pod of the old run
 * (`oldUids`) is still live and bound.
 */
async function placedAnew(jobId: string, jobName: string, oldUids: Set<string>): Promise<true | undefined> {
  const current = (await qm.ok('GET', `/v1/jobs/${jobId}`)) as { state: string; allocation?: { replica: number; node: string }[] };
  const allocation = new Map((current.allocation ?? []).map((a) => [String(a.replica), a.node]));
  const pods = (await podsOf(qm, `job-name=${jobName}`)).filter((p) => live(p) && p.spec?.nodeName);
  const stale = pods.filter((p) => oldUids.has(p.metadata!.uid!)).map((p) => `${p.metadata!.name} on ${p.spec!.nodeName}`);
  if (stale.length > 0) throw new Error(`pods of the old run left to the new admission: ${stale.join(', ')}`);
  const placed = pods.length === 2 && pods.every((p) => p.spec!.nodeName === allocation.get(String(replicaOfPod(p))));
  return placed && ['BINDING', 'RUNNING'].includes(current.state) ? true : undefined;
}

async function readJob(name: string): Promise<V1Job> {
  return qm.cluster.kubeConfig.makeApiClient(BatchV1Api).readNamespacedJob({ name, namespace: qm.namespace });
}

describe('a workload gang requeued and admitted again before its delete ran', () => {
  it("is bound only once the old run's pods are gone: the delete stops the workload though the job holds again, and the new pods are its controller's new ones", async () => {
    const kubelet = runKubelet(qm);
    try {
      await applyManifest(qm, gpuJob('readmitted'));
      const job = await workloadJob(qm, 'Job', 'readmitted', (j) => j.state === 'RUNNING', 120_000);
      const old = await boundPods(qm, job.id);
      expect(old).toHaveLength(2);
      const oldUids = new Set(old.map((p) => p.metadata!.uid!));

      await race(job.id, async ({ deliver, remove, bind }) => {
        // The worker takes the new admission's bind first, then the delete.
        await deliver(bind);
        expect(await deliver(remove)).toBe('done');
      });
      // The scheduler, its worker and watchers back (the importer labels the controller's new pods): every pod of the
      // job that is bound and live is a new one of its controller, on its replica's node — none of the old run.
      await eventually('2 new pods bound where the new admission put them', () => placedAnew(job.id, 'readmitted', oldUids), 120_000);
      await deleteManifest(qm, gpuJob('readmitted'));
      await workloadJob(qm, 'Job', 'readmitted', (j) => j.state === 'CANCELLED', 90_000);
    } finally {
      await kubelet.stop();
    }
  }, 420_000);

  it("does not resume its suspended workload while pods of the earlier run are still live: resumed at once, its controller may never act on the suspension", async () => {
    const kubelet = runKubelet(qm);
    const admission = qm.cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const policy = 'qm-test-hold-deletes-of-held';
    try {
      await applyManifest(qm, gpuJob('held'));
      const job = await workloadJob(qm, 'Job', 'held', (j) => j.state === 'RUNNING', 120_000);
      const old = await boundPods(qm, job.id);
      expect(old).toHaveLength(2);
      const oldUids = new Set(old.map((p) => p.metadata!.uid!));
      // The Job controller is slow to act on a suspension: its deletes of the Job's pods are refused for now.
      await admission.createValidatingAdmissionPolicy({
        body: {
          metadata: { name: policy },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] }] },
            validations: [{ expression: `oldObject.metadata.namespace != '${qm.namespace}' || !has(oldObject.metadata.labels) || !('job-name' in oldObject.metadata.labels) || oldObject.metadata.labels['job-name'] != 'held'`, message: 'held by the test' }],
          },
        },
      });
      await admission.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: policy }, spec: { policyName: policy, validationActions: ['Deny'] } } });
      await eventually('the policy refuses deletes of held’s pods', async () =>
        qm.core.deleteNamespacedPod({ namespace: qm.namespace, name: old[0]!.metadata!.name!, dryRun: 'All' }).then(() => undefined, () => true),
      );

      await race(job.id, async ({ deliver, remove, bind }) => {
        // The delete goes first this time (it stops the Job), then the bind.
        expect(await deliver(remove)).toBe('done');
        expect((await readJob('held')).spec?.suspend).toBe(true);
        expect(await deliver(bind)).toBe('not-ready');
        expect((await readJob('held')).spec?.suspend).toBe(true);
      });
      // The controller's deletes go through: the old pods go, the Job is resumed and its new pods are bound.
      await admission.deleteValidatingAdmissionPolicyBinding({ name: policy });
      await admission.deleteValidatingAdmissionPolicy({ name: policy });
      await eventually('2 new pods bound where the new admission put them', () => placedAnew(job.id, 'held', oldUids), 180_000);
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name: policy }).catch(() => undefined);
      await admission.deleteValidatingAdmissionPolicy({ name: policy }).catch(() => undefined);
      await kubelet.stop();
    }
  }, 420_000);
});
