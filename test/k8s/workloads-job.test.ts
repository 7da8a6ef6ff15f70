// batch/v1 Jobs gang-scheduled by Quartermaster, with the real Job controller (kube-controller-manager): the
// upstream example plus the team label becomes one job; GPU Jobs are admitted whole within quota, a second one
// waits with its reason; a team within its nominal quota reclaims by suspending a borrowing team's Job, which
// comes back as the same job when capacity returns; completion (the Job's Complete condition) releases quota.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam } from './controllers/examples.js';
import { buildQm, runQm } from '../e2e/cli/qm-process.js';
import { ADMIN, eventually, type QmEnv } from './scheduler-harness.js';
import {
  applyManifest,
  startWorkloadSuite,
  stopWorkloadSuite,
  boundPods,
  eventsOn,
  live,
  podsOf,
  runKubelet,
  scheduledCondition,
  succeed,
  used,
  workloadJob,
  workloadJobs,
  teamPriorityClass,
} from './support/workloads.js';
import { KubeCluster, LABEL_JOB_ID, replicaOfPod } from '#kube';
import { KubeJobStore } from '../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { WorkloadImporter } from '../../apps/scheduler/src/kubernetes/workload-importer.js';
import { restrictedIdentity } from './support/restricted-identity.js';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100 (2 nodes × 8): nlp owns it, vision may borrow all of it.
  ({ qm, controllers } = await startWorkloadSuite('wl-job', ['kube-controller-manager'], 2, 16));
  // The class nlp's reclaiming workloads name (value 100, the number they carried before ADR 0022).
  await teamPriorityClass(qm, 'nlp', 'high', 100);
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

/** An indexed Job of `replicas` pods with 8 GPUs each, on h100. */
function gpuJob(name: string, team: string, replicas: number, priorityClass?: string) {
  const job = forTeam(examples.indexedJob(), {
    team,
    name,
    schedulerName: 'quartermaster',
    limits: { 'nvidia.com/gpu': '8' },
    ...(priorityClass === undefined ? {} : { priorityClass }),
  });
  job.spec.completions = replicas;
  job.spec.parallelism = replicas;
  job.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
  return job;
}

describe('batch/v1 Job', () => {
  it('the upstream indexed Job with the team label is one job of `parallelism` pods, bound where the core placed them', async () => {
    const manifest = await applyManifest(
      qm,
      forTeam(examples.indexedJob(), { team: 'vision', schedulerName: 'quartermaster' }),
    );
    const job = await workloadJob(
      qm,
      'Job',
      'indexed-job',
      (j) => j.state === 'BINDING' || j.state === 'RUNNING',
    );
    expect(job).toMatchObject({
      replicas: 3,
      minReplicas: 3,
      acceleratorsPerReplica: 0,
      workload: { apiVersion: 'batch/v1', kind: 'Job', name: 'indexed-job', uid: manifest.metadata!.uid },
    });
    const pods = await eventually('3 pods bound', async () => {
      const bound = await boundPods(qm, job.id);
      return bound.length === 3 ? bound : undefined;
    });
    const allocation = new Map(job.allocation!.map((a) => [String(a.replica), a.node]));
    for (const pod of pods)
      expect(pod.spec!.nodeName).toBe(allocation.get(String(replicaOfPod(pod))));

    // The real `qm` names the workload the job stands for.
    buildQm();
    const described = await runQm(['describe', job.id], { env: { QM_SERVER: qm.url, QM_TOKEN: ADMIN } });
    expect(described).toMatchObject({ code: 0, stderr: '' });
    expect(described.stdout).toContain(
      `Workload:     Job ${qm.namespace}/indexed-job (batch/v1, uid ${manifest.metadata!.uid}); pods: `,
    );
  }, 300_000);

  it('the first bind is whole: an admitted Job whose controller could make only 2 of its 3 pods gets none bound until the third exists', async () => {
    // A ValidatingAdmissionPolicy keeps the Job controller from creating index 2 of Job `partial` (it retries).
    const admission = qm.cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const holdExpression = "!has(object.metadata.labels) || !('job-name' in object.metadata.labels) || object.metadata.labels['job-name'] != 'partial' || !('batch.kubernetes.io/job-completion-index' in object.metadata.labels) || object.metadata.labels['batch.kubernetes.io/job-completion-index'] != '2'";
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'qm-test-hold-partial-2' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
          validations: [{ expression: holdExpression, message: 'held by the test' }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: { metadata: { name: 'qm-test-hold-partial-2' }, spec: { policyName: 'qm-test-hold-partial-2', validationActions: ['Deny'] } },
    });
    const probe = { metadata: { generateName: 'probe-', labels: { 'job-name': 'partial', 'batch.kubernetes.io/job-completion-index': '2' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    await eventually('the policy denies index 2', async () =>
      qm.core.createNamespacedPod({ namespace: qm.namespace, body: probe, dryRun: 'All' }).then(() => undefined, () => true),
    );

    // Every pod bound while the Job had fewer than 3 would break the gang's first bind.
    const early: string[] = [];
    const seen = new Map<string, boolean>();
    const watch = await qm.cluster.watchPods(
      {
        onAdd: (p) => note(p),
        onUpdate: (p) => note(p),
      },
      { namespace: qm.namespace },
    );
    function note(pod: V1Pod): void {
      if (pod.metadata?.labels?.['job-name'] !== 'partial') return;
      seen.set(pod.metadata.name!, !!pod.spec?.nodeName);
      if (pod.spec?.nodeName && seen.size < 3) early.push(pod.metadata.name!);
    }
    try {
      const manifest = forTeam(examples.indexedJob(), { team: 'vision', name: 'partial', schedulerName: 'quartermaster' });
      manifest.spec.completions = 3;
      manifest.spec.parallelism = 3;
      await applyManifest(qm, manifest);
      const job = await workloadJob(qm, 'Job', 'partial', (j) => j.state === 'BINDING');
      await eventually('partial’s 2 pods labelled with its job', async () => {
        const pods = await podsOf(qm, 'job-name=partial');
        return pods.length === 2 && pods.every((p) => p.metadata?.labels?.['quartermaster.io/job-id'] === job.id) ? true : undefined;
      });
      // A later Job imported and bound: import passes ran after `partial` was BINDING with both its pods.
      await applyManifest(qm, forTeam(examples.indexedJob(), { team: 'vision', name: 'after-partial', schedulerName: 'quartermaster' }));
      const after = await workloadJob(qm, 'Job', 'after-partial');
      await eventually('after-partial bound', async () => ((await boundPods(qm, after.id)).length === 3 ? true : undefined), 90_000);
      expect((await podsOf(qm, 'job-name=partial')).filter((p) => p.spec?.nodeName)).toHaveLength(0);
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name: 'qm-test-hold-partial-2' }).catch(() => undefined);
      await admission.deleteValidatingAdmissionPolicy({ name: 'qm-test-hold-partial-2' }).catch(() => undefined);
    }
    try {
      // The Job controller makes index 2 now: the whole gang is bound, each pod where the core placed it.
      const job = await workloadJob(qm, 'Job', 'partial');
      await eventually('partial’s 3 pods bound', async () => ((await boundPods(qm, job.id)).length === 3 ? true : undefined), 120_000);
      expect(early).toEqual([]);
    } finally {
      await watch.stop();
    }
  }, 300_000);

  it('GPU Jobs: admitted whole within quota; a second waits for quota with its reason, none of its pods bound', async () => {
    await applyManifest(qm, gpuJob('vision-a', 'vision', 2));
    const a = await workloadJob(qm, 'Job', 'vision-a', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    expect(a).toMatchObject({ replicas: 2, acceleratorsPerReplica: 8, admittedReplicas: 2 });
    await eventually('2 pods of vision-a bound', async () =>
      (await boundPods(qm, a.id)).length === 2 ? true : undefined,
    );

    await applyManifest(qm, gpuJob('vision-b', 'vision', 2));
    const b = await workloadJob(
      qm,
      'Job',
      'vision-b',
      (j) => j.state === 'PENDING' && j.pending?.code === 'QUOTA_EXCEEDED',
    );
    expect(b.pending!.message).toMatch(/vision/);
    // Where Kubernetes users look: each waiting pod says why and when (PodScheduled=False), the Job has an Event.
    const pods = await eventually('vision-b pods show the reason', async () => {
      const list = await podsOf(qm, 'job-name=vision-b');
      return list.length === 2 && list.every((p) => scheduledCondition(p)?.reason === 'QuotaExceeded')
        ? list
        : undefined;
    });
    expect(pods.every((p) => !p.spec?.nodeName)).toBe(true);
    expect(scheduledCondition(pods[0]!)).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/^QUOTA_EXCEEDED: .*vision/),
    });
    const events = await eventually('a QuotaExceeded Event on the Job', async () => {
      const list = await eventsOn(qm, 'Job', 'vision-b');
      return list.some((e) => e.reason === 'QuotaExceeded') ? list : undefined;
    });
    expect(events.filter((e) => e.reason === 'QuotaExceeded')).toHaveLength(1);
    await eventually('vision-a has an Admitted Event', async () => ((await eventsOn(qm, 'Job', 'vision-a')).some((e) => e.reason === 'Admitted') ? true : undefined));
  }, 180_000);

  it('a team within nominal reclaims by suspending the borrowing Job; it returns as the same job; completion releases quota', async () => {
    const kubelet = runKubelet(qm);
    try {
      const before = await workloadJob(qm, 'Job', 'vision-a');
      await applyManifest(qm, gpuJob('nlp-c', 'nlp', 2, 'high'));
      const c = await workloadJob(qm, 'Job', 'nlp-c', (j) => j.state === 'RUNNING', 90_000);
      expect(await boundPods(qm, c.id)).toHaveLength(2);

      // vision-a was suspended (its controller removed the pods) and waits as the same job.
      const a = await workloadJob(
        qm,
        'Job',
        'vision-a',
        (j) => j.state === 'PENDING' && j.preemptionCount === 1,
      );
      expect(a.id).toBe(before.id);
      const batch = await qm.cluster.kubeConfig
        .makeApiClient((await import('@kubernetes/client-node')).BatchV1Api)
        .readNamespacedJob({ name: 'vision-a', namespace: qm.namespace });
      expect(batch.spec?.suspend).toBe(true);
      expect((await podsOf(qm, 'job-name=vision-a')).filter(live)).toHaveLength(0);
      const preempted = (await eventually('vision-a has a Preempted Event', async () => (await eventsOn(qm, 'Job', 'vision-a')).find((e) => e.reason === 'Preempted')));
      expect(preempted).toMatchObject({ type: 'Warning', message: expect.stringContaining('suspends it') });

      // nlp-c completes: its Job controller says Complete, the job SUCCEEDED and nlp's quota is free again.
      await succeed(qm, await boundPods(qm, c.id));
      await workloadJob(qm, 'Job', 'nlp-c', (j) => j.state === 'SUCCEEDED');
      expect(await used(qm, 'nlp', 'h100')).toBe(0);

      // Capacity is back: vision-a is resumed by Quartermaster, its new pods bound, the same job RUNNING.
      const back = await workloadJob(qm, 'Job', 'vision-a', (j) => j.state === 'RUNNING', 90_000);
      expect(back.id).toBe(before.id);
      expect(
        (
          await qm.cluster.kubeConfig
            .makeApiClient((await import('@kubernetes/client-node')).BatchV1Api)
            .readNamespacedJob({ name: 'vision-a', namespace: qm.namespace })
        ).spec?.suspend,
      ).toBe(false);
      expect(await boundPods(qm, back.id)).toHaveLength(2);
      expect(await used(qm, 'vision', 'h100')).toBe(16);
    } finally {
      await kubelet.stop();
    }
  }, 300_000);

  it('pods that ask for GPUs only through a DRA ResourceClaim say DRAClaimsNotSupported (PodScheduled=False) with a Warning Event — a Job’s and an annotated bare pod’s — and become no job', async () => {
    const claims = (spec: { containers: { resources?: Record<string, unknown> }[]; resourceClaims?: unknown[] }): void => {
      spec.resourceClaims = [{ name: 'gpus', resourceClaimTemplateName: 'eight-h100' }];
      for (const container of spec.containers) container.resources = { requests: { cpu: '100m' }, claims: [{ name: 'gpus' }] };
    };
    const job = forTeam(examples.indexedJob(), { team: 'vision', name: 'dra-job', schedulerName: 'quartermaster' });
    job.spec.completions = 2;
    job.spec.parallelism = 2;
    claims(job.spec.template.spec);
    await applyManifest(qm, job);
    const pods = await eventually('dra-job’s pods say DRAClaimsNotSupported', async () => {
      const list = await podsOf(qm, 'job-name=dra-job');
      return list.length === 2 && list.every((p) => scheduledCondition(p)?.reason === 'DRAClaimsNotSupported') ? list : undefined;
    }, 90_000);
    expect(scheduledCondition(pods[0]!)).toMatchObject({ status: 'False', message: expect.stringContaining('only through DRA ResourceClaims') });
    expect(pods.every((p) => !p.spec?.nodeName)).toBe(true);
    const warning = await eventually('a DRAClaimsNotSupported Event on the Job', async () =>
      (await eventsOn(qm, 'Job', 'dra-job')).find((e) => e.reason === 'DRAClaimsNotSupported'),
    );
    expect(warning).toMatchObject({ type: 'Warning', message: expect.stringContaining('resources.limits') });
    expect(await workloadJobs(qm, 'Job', 'dra-job')).toEqual([]);

    const bare = {
      metadata: {
        name: 'dra-bare',
        namespace: qm.namespace,
        annotations: { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': 'dra-bare', 'quartermaster.io/gang-size': '1', 'quartermaster.io/flavor': 'h100' },
      },
      spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x' }] as { name: string; image: string; resources?: Record<string, unknown> }[] },
    };
    claims(bare.spec);
    await qm.core.createNamespacedPod({ namespace: qm.namespace, body: bare });
    const pod = await eventually('dra-bare says DRAClaimsNotSupported', async () => {
      const [p] = await podsOf(qm, '!job-name').then((list) => list.filter((x) => x.metadata?.name === 'dra-bare'));
      return p && scheduledCondition(p)?.reason === 'DRAClaimsNotSupported' ? p : undefined;
    });
    expect(pod.spec?.nodeName).toBeUndefined();
    await eventually('a DRAClaimsNotSupported Event on dra-bare', async () =>
      (await eventsOn(qm, 'Pod', 'dra-bare')).find((e) => e.reason === 'DRAClaimsNotSupported' && e.type === 'Warning'),
    );
  }, 180_000);
});

describe('the workload importer and the cycle', () => {
  it('asks for a cycle as soon as it has submitted a gang, before labelling its pods: one it may not label still gets one', async () => {
    // Pods naming a scheduler of their own, so that only this importer (not the suite's Quartermaster) takes them.
    const schedulerName = 'qm-own-importer';
    await applyManifest(qm, forTeam(examples.indexedJob(), { team: 'vision', name: 'unlabelled', schedulerName }));
    await eventually('3 pods of unlabelled', async () => ((await podsOf(qm, 'job-name=unlabelled')).length === 3 ? true : undefined));
    // May read pods and Jobs, never patch a pod: every label patch of the pass fails.
    const identity = await restrictedIdentity(qm.cluster.kubeConfig, 'qm-importer-no-patch', [
      { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] },
    ]);
    let cycles = 0;
    const importer = new WorkloadImporter(
      new KubeCluster(identity.kubeConfig, { namespace: qm.namespace, schedulerName }),
      new KubeJobStore(qm.api.database),
      0,
      () => cycles++,
      pino({ level: 'silent' }),
      null,
      undefined,
      // Only this Job's pods (other tests' waiting GPU pods are candidates too).
      async () => (await podsOf(qm, 'job-name=unlabelled')).filter((pod) => !pod.spec?.nodeName),
    );
    try {
      expect(await importer.runOnce()).toEqual([]); // its labelling failed
      // Submitted (the suite's scheduler may have admitted it since: its bind waits for labels that never come).
      await workloadJob(qm, 'Job', 'unlabelled');
      expect(cycles).toBe(1);
    } finally {
      await importer.stop();
      await identity.cleanUp();
    }
  }, 180_000);
});

describe('the workload importer ahead of its watch', () => {
  it("a pass that sees its gang's pods before the watch shows the labels it patched patches none of them again", async () => {
    await applyManifest(qm, forTeam(examples.indexedJob(), { team: 'vision', name: 'stale-view', schedulerName: 'quartermaster' }));
    const created = await eventually('3 pods of stale-view', async () => {
      const pods = await podsOf(qm, 'job-name=stale-view');
      return pods.length === 3 ? pods : undefined;
    });
    // The view a lagging watch gives: the pods as created, unbound and without the job-id label (every pass sees it).
    const stale = created.map((pod) => {
      const copy = structuredClone(pod);
      delete copy.metadata!.labels?.[LABEL_JOB_ID];
      delete copy.spec!.nodeName;
      return copy;
    });
    const reads = [
      { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/binding'], verbs: ['create'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] },
    ];
    const identity = await restrictedIdentity(qm.cluster.kubeConfig, 'qm-importer-stale', [
      ...reads,
      { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
    ]);
    const importer = new WorkloadImporter(
      new KubeCluster(identity.kubeConfig, { namespace: qm.namespace }),
      new KubeJobStore(qm.api.database),
      0,
      () => undefined,
      pino({ level: 'silent' }),
      null,
      undefined,
      () => Promise.resolve(stale),
    );
    try {
      const first = await importer.runOnce();
      expect(first).toHaveLength(1);
      // From now on any patch of a pod is refused: a pass that patched the gang's pods again would fail its import.
      await identity.setRules(reads);
      await eventually('patching a pod is refused', async () =>
        identity.kubeConfig
          .makeApiClient(CoreV1Api)
          .patchNamespacedPod(
            { name: created[0]!.metadata!.name!, namespace: qm.namespace, body: { metadata: { labels: { probe: 'x' } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .then(() => undefined, (error: { code?: number }) => (error.code === 403 ? true : undefined)),
      );
      expect(await importer.runOnce()).toEqual(first);
    } finally {
      await importer.stop();
      await identity.cleanUp();
    }
  }, 180_000);
});
