// Helpers for the workload gang tests (test/k8s/workloads-*.test.ts): apply a team's manifest, find the
// Quartermaster job of a workload, play the kubelet for controller-made pods (Running, Succeeded, and removing
// pods their controller deleted gracefully — no kubelet confirms that here).
import { KubernetesObjectApi, type V1Pod } from '@kubernetes/client-node';
import { LABEL_JOB_ID } from '#kube';
import { startControllers, type ControllerName, type RunningControllers } from '../controllers/controllers.js';
import type { Manifest } from '../controllers/examples.js';
import { eventually, seedTenancy, startQm, type QmEnv } from '../scheduler-harness.js';

export interface WorkloadJob {
  id: string;
  state: string;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  admittedReplicas: number | null;
  preemptionCount: number;
  pending: { code: string; message: string; estimatedStartAt: string | null } | null;
  workload: { apiVersion: string; kind: string; namespace: string; name: string; uid: string };
  allocation?: { replica: number; node: string; accelerators: number }[];
}

export async function applyManifest(qm: QmEnv, object: Manifest): Promise<Manifest> {
  const api = KubernetesObjectApi.makeApiClient(qm.cluster.kubeConfig);
  return await api.create({ ...object, metadata: { ...object.metadata, namespace: qm.namespace } });
}

export async function deleteManifest(qm: QmEnv, object: Manifest): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(qm.cluster.kubeConfig);
  await api.delete(
    { ...object, metadata: { name: object.metadata!.name, namespace: qm.namespace } },
    undefined,
    undefined,
    undefined,
    undefined,
    'Background',
  );
}

/** Every Quartermaster job standing for a workload of this kind and name. */
export async function workloadJobs(qm: QmEnv, kind: string, name: string): Promise<WorkloadJob[]> {
  const { items } = (await qm.ok('GET', '/v1/jobs?limit=500')) as { items: WorkloadJob[] };
  return items.filter(
    (j) => j.workload?.kind === kind && j.workload.name === name && j.workload.namespace === qm.namespace,
  );
}

/** The one job of a workload once it exists (with `where`, once it also satisfies that). */
export async function workloadJob(
  qm: QmEnv,
  kind: string,
  name: string,
  where: (job: WorkloadJob) => boolean = () => true,
  timeoutMs?: number,
): Promise<WorkloadJob> {
  return eventually(
    `the job of ${kind} ${name}${where.toString().length < 200 ? ` where ${where.toString()}` : ''}`,
    async () => {
      const jobs = await workloadJobs(qm, kind, name);
      if (jobs.length > 1)
        throw new Error(`${jobs.length} jobs for one ${kind}: ${jobs.map((j) => j.id).join(', ')}`);
      const job = jobs[0] && ((await qm.ok('GET', `/v1/jobs/${jobs[0].id}`)) as WorkloadJob);
      return job && where(job) ? job : undefined;
    },
    timeoutMs,
  );
}

export async function podsOf(qm: QmEnv, selector: string): Promise<V1Pod[]> {
  return qm.cluster.listPods({ namespace: qm.namespace, labelSelector: selector });
}

export const live = (pod: V1Pod): boolean =>
  !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';

/**
 * Plays the kubelet once over the namespace: bound Pending pods start Running (with Ready, as controllers
 * waiting for readiness expect), and pods being deleted gracefully are removed (grace 0). Returns what it did.
 */
export async function kubelet(qm: QmEnv): Promise<{ started: number; removed: number }> {
  const pods = await qm.cluster.listPods({ namespace: qm.namespace });
  let started = 0;
  let removed = 0;
  for (const pod of pods) {
    const name = pod.metadata!.name!;
    if (pod.metadata?.deletionTimestamp) {
      await qm.core
        .deleteNamespacedPod({ name, namespace: qm.namespace, gracePeriodSeconds: 0 })
        .catch(() => undefined);
      removed++;
    } else if (pod.spec?.nodeName && pod.status?.phase === 'Pending') {
      const now = new Date();
      await qm.cluster
        .patchPodStatus(
          name,
          {
            phase: 'Running',
            startTime: now,
            conditions: [
              { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
              { type: 'Initialized', status: 'True', lastTransitionTime: now },
              { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
              { type: 'Ready', status: 'True', lastTransitionTime: now },
            ],
            containerStatuses: (pod.spec.containers ?? []).map((c) => ({
              name: c.name,
              image: c.image ?? '',
              imageID: '',
              ready: true,
              restartCount: 0,
              started: true,
              state: { running: { startedAt: now } },
            })),
          },
          qm.namespace,
        )
        .catch(() => undefined);
      started++;
    }
  }
  return { started, removed };
}

/** A kubelet loop in the background until stopped (pods keep coming from controllers). */
export function runKubelet(qm: QmEnv, everyMs = 250): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await kubelet(qm).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** The pods of a job finish: Succeeded with exit code 0, as a kubelet reports a completed container. */
export async function succeed(qm: QmEnv, pods: readonly V1Pod[]): Promise<void> {
  for (const pod of pods) {
    const now = new Date();
    await qm.cluster.patchPodStatus(
      pod.metadata!.name!,
      {
        phase: 'Succeeded',
        conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now }],
        containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
          name: c.name,
          image: c.image ?? '',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
        })),
      },
      qm.namespace,
    );
  }
}

/** Pods of a Quartermaster job, bound and live. */
export async function boundPods(qm: QmEnv, jobId: string): Promise<V1Pod[]> {
  return (await podsOf(qm, `${LABEL_JOB_ID}=${jobId}`)).filter((p) => live(p) && p.spec?.nodeName);
}

/** Team usage of a flavor as GET /v1/teams/{team} reports it. */
export async function used(qm: QmEnv, team: string, flavor: string): Promise<number> {
  const body = (await qm.ok('GET', `/v1/teams/${team}`)) as { quotas: { flavor: string; used: number }[] };
  return body.quotas.find((q) => q.flavor === flavor)?.used ?? 0;
}

/** Events recorded on an object of the test's namespace, by reason. */
export async function eventsOn(
  qm: QmEnv,
  kind: string,
  name: string,
): Promise<{ type: string; reason: string; message: string; count: number }[]> {
  const list = await qm.core.listNamespacedEvent({
    namespace: qm.namespace,
    fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
  });
  return list.items.map((e) => ({
    type: e.type ?? '',
    reason: e.reason ?? '',
    message: e.message ?? '',
    count: e.count ?? 1,
  }));
}

/** The pod's PodScheduled condition as `reason: message`, or undefined. */
export function scheduledCondition(
  pod: V1Pod,
): { status: string; reason: string; message: string } | undefined {
  const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
  return c ? { status: c.status, reason: c.reason ?? '', message: c.message ?? '' } : undefined;
}

/**
 * Deletes the test's workloads and their pods (in afterAll, while the controllers still run). Every
 * Quartermaster of the k8s suite imports pods of all namespaces, and the suite's control plane has no
 * namespace controller: a file's leftover workloads, reconciled again by the next file's controllers, would be
 * imported by the next file's Quartermaster (same team names) and hold its quota.
 */
export async function deleteWorkloads(qm: QmEnv): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(qm.cluster.kubeConfig);
  const kinds: [string, string][] = [
    ['trainer.kubeflow.org/v1alpha1', 'TrainJob'],
    ['jobset.x-k8s.io/v1alpha2', 'JobSet'],
    ['ray.io/v1', 'RayJob'],
    ['ray.io/v1', 'RayCluster'],
    ['leaderworkerset.x-k8s.io/v1', 'LeaderWorkerSet'],
    ['batch/v1', 'Job'],
  ];
  for (const [apiVersion, kind] of kinds) {
    const list = await objects.list(apiVersion, kind, qm.namespace).catch(() => ({ items: [] }));
    for (const object of list.items) {
      await objects
        .delete(
          { apiVersion, kind, metadata: { name: object.metadata!.name!, namespace: qm.namespace } },
          undefined,
          undefined,
          0,
          undefined,
          'Background',
        )
        .catch(() => undefined);
    }
  }
  await qm.core.deleteCollectionNamespacedPod({ namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
}

/**
 * A priority class (PUT /v1/priority-classes/{name}, as an admin) that `team`'s members may choose: it becomes the
 * team's maxPriorityClass. Workloads name it with label quartermaster.io/priority-class (ADR 0022).
 */
export async function teamPriorityClass(qm: QmEnv, team: string, name: string, value: number): Promise<string> {
  await qm.ok('PUT', `/v1/priority-classes/${name}`, { value, description: 'k8s test' });
  await qm.ok('PATCH', `/v1/teams/${team}`, { maxPriorityClass: name });
  return name;
}

export interface WorkloadSuite {
  qm: QmEnv;
  controllers: RunningControllers;
}

/**
 * A workload test file's world: the upstream `controllers`, a Quartermaster over `nodes` nodes per flavor with
 * the seeded tenancy, and h100 owned by nlp (nodes × 8 nominal) that vision may borrow `visionBorrows` of.
 */
export async function startWorkloadSuite(
  label: string,
  controllers: readonly ControllerName[],
  nodes: number,
  visionBorrows: number,
  options: Parameters<typeof startQm>[3] = {},
): Promise<WorkloadSuite> {
  const running = await startControllers(controllers);
  const qm = await startQm(label, nodes, {}, options);
  await seedTenancy(qm);
  await qm.ok('PUT', '/v1/teams/vision/quotas/h100', { nominal: 0, borrowingLimit: visionBorrows, lendingLimit: null });
  await qm.ok('PUT', '/v1/teams/nlp/quotas/h100', { nominal: nodes * 8, borrowingLimit: 0, lendingLimit: null });
  return { qm, controllers: running };
}

/** Deletes the suite's workloads while its controllers still run, then stops Quartermaster and the controllers. */
export async function stopWorkloadSuite(suite: Partial<WorkloadSuite>): Promise<void> {
  if (suite.qm) await deleteWorkloads(suite.qm);
  await suite.qm?.close();
  await suite.controllers?.stop();
}
