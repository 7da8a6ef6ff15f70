// npm run bench:k8s — pods bound per second on one real control plane (etcd + kube-apiserver v1.34, no
// kubelet) with fake nodes, two scenarios, one JSON line each:
// - `pods`: first the stock kube-scheduler alone binds N single-GPU pods, then Quartermaster (REST
//   submission → cycle → pods created and bound through pods/binding) binds N single-GPU jobs' pods on the
//   same nodes.
// - `jobsets`: M JobSets of 8 single-GPU pods each (one replicatedJob, parallelism 8) made into pods by the real
//   JobSet and Job controllers, from creation to every pod bound: the stock kube-scheduler (pod by pod, no
//   gangs) vs Quartermaster (the JobSets carry the team label and name its scheduler: each becomes one gang
//   job through the workload importer, admitted whole, its pods bound once all exist).
//   QM_BENCH_SCENARIOS (pods,jobsets), QM_BENCH_NODES (500), QM_BENCH_PODS (4000), QM_BENCH_JOBSETS (100),
//   QM_BENCH_KS_QPS (unset = kube-scheduler's stock client QPS/burst 50/100; set e.g. 1000 to lift it),
//   QM_WORKER_CONCURRENCY (unset = the service's default).
import { execFileSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { KubeCluster } from '#kube';
import { schedulerSettingsFromEnv } from '#scheduling';
import { startKubeScheduler } from '../../test/k8s/support/kube-scheduler.js';
import { fakeNode } from '../../test/k8s/support/cluster.js';
import { seedTenancy, startQm } from '../../test/k8s/scheduler-harness.js';
import { startControllers } from '../../test/k8s/controllers/controllers.js';

const NODES = Number(process.env.QM_BENCH_NODES ?? 500);
const PODS = Number(process.env.QM_BENCH_PODS ?? 4000);
const JOBSETS = Number(process.env.QM_BENCH_JOBSETS ?? 100);
const SCENARIOS = new Set((process.env.QM_BENCH_SCENARIOS ?? 'pods,jobsets').split(',').map((s) => s.trim()));
const KS_QPS = process.env.QM_BENCH_KS_QPS;
const WORKER_CONCURRENCY = String(schedulerSettingsFromEnv(process.env).workerConcurrency);
const root = new URL('../../', import.meta.url).pathname;

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Resolves when `n` pods of the namespace are bound; the clock is read by the caller. */
async function waitBound(cluster: KubeCluster, namespace: string, n: number): Promise<void> {
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const bound = new Set<string>();
  const see = (pod: V1Pod): void => {
    if (pod.spec?.nodeName) bound.add(pod.metadata!.name!);
    if (bound.size >= n) done();
  };
  const watch = await cluster.watchPods({ onAdd: see, onUpdate: see }, { namespace });
  for (const pod of watch.list()) see(pod);
  await finished;
  await watch.stop();
}

function log(message: string): void {
  process.stderr.write(`bench:k8s ${new Date().toISOString()} ${message}\n`);
}

interface Fleet {
  kc: KubeConfig;
  core: CoreV1Api;
  names: string[];
  h100Product: string;
  a100Product: string;
}

function startStockKubeScheduler(): ReturnType<typeof startKubeScheduler> {
  return startKubeScheduler(
    'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: default-scheduler\n',
    (config) => {
      if (KS_QPS) config.clientConnection = { ...(config.clientConnection as object), qps: Number(KS_QPS), burst: Number(KS_QPS) * 2 };
    },
  );
}

/** Scenario `pods`: N single-GPU pods (kube-scheduler) vs N single-GPU jobs submitted over REST (Quartermaster). */
async function podsScenario({ kc, core, names, h100Product, a100Product }: Fleet): Promise<void> {
  // 1. Stock kube-scheduler alone.
  const ksNamespace = 'bench-kube-scheduler';
  await core.createNamespace({ body: { metadata: { name: ksNamespace } } });
  const ksCluster = new KubeCluster(kc, { namespace: ksNamespace });
  const ks = await startStockKubeScheduler();
  log(`kube-scheduler: ${PODS} pods`);
  const podNames = Array.from({ length: PODS }, (_, i) => `p-${i}`);
  const ksStart = performance.now();
  const ksBound = waitBound(ksCluster, ksNamespace, PODS);
  await pool(podNames, 64, (name) =>
    core.createNamespacedPod({
      namespace: ksNamespace,
      body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' }, limits: { 'nvidia.com/gpu': '1' } } }] } },
    }),
  );
  await ksBound;
  const ksSeconds = (performance.now() - ksStart) / 1000;
  await ks.stop();
  log(`kube-scheduler: ${ksSeconds.toFixed(1)} s; removing its pods`);
  await core.deleteCollectionNamespacedPod({ namespace: ksNamespace, gracePeriodSeconds: 0 });
  for (;;) {
    const left = await core.listNamespacedPod({ namespace: ksNamespace, limit: 1 });
    if (left.items.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  // 2. Quartermaster.
  const qm = await startQm(
    'bench',
    0,
    { QM_KUBE_IMPORT_EVERY_MS: '0', QM_WORKER_CONCURRENCY: WORKER_CONCURRENCY },
    { existingNodes: { names, h100Product, a100Product } },
  );
  try {
    await seedTenancy(qm, { nominal: PODS, borrowingLimit: 0 });
    for (;;) {
      const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items;
      if (nodes.length >= NODES) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log(`quartermaster: ${PODS} single-GPU jobs`);
    const qmStart = performance.now();
    const qmBound = waitBound(qm.cluster, qm.namespace, PODS);
    await pool(podNames, 64, (name) =>
      qm.ok('POST', '/v1/jobs', {
        name,
        team: 'vision',
        kind: 'batch-inference',
        replicas: 1,
        acceleratorsPerReplica: 1,
        flavors: ['h100', 'a100'],
        template: { image: 'x', cpuMillis: 100 },
      }),
    );
    const qmSubmitSeconds = (performance.now() - qmStart) / 1000;
    await qmBound;
    const qmSeconds = (performance.now() - qmStart) / 1000;
    const kubeSchedulerPodsPerSec = PODS / ksSeconds;
    const quartermasterPodsPerSec = PODS / qmSeconds;
    process.stdout.write(
      `${JSON.stringify({
        scenario: 'pods',
        pods: PODS,
        nodes: NODES,
        kubeSchedulerPodsPerSec: Math.round(kubeSchedulerPodsPerSec * 10) / 10,
        quartermasterPodsPerSec: Math.round(quartermasterPodsPerSec * 10) / 10,
        ratio: Math.round((quartermasterPodsPerSec / kubeSchedulerPodsPerSec) * 100) / 100,
        kubeSchedulerClientQps: KS_QPS ? Number(KS_QPS) : 'stock (50)',
        quartermasterSubmitSeconds: Math.round(qmSubmitSeconds * 10) / 10,
        quartermasterWorkerConcurrency: Number(WORKER_CONCURRENCY),
      })}\n`,
    );
  } finally {
    await qm.close();
  }
}

const PODS_PER_JOBSET = 8;

/** A JobSet of one replicatedJob of 8 single-GPU pods; for Quartermaster, with the team label and its scheduler. */
function benchJobSet(name: string, quartermaster: boolean): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: 'jobset.x-k8s.io/v1alpha2',
    kind: 'JobSet',
    metadata: { name, ...(quartermaster ? { labels: { 'quartermaster.io/team': 'vision' } } : {}) },
    spec: {
      replicatedJobs: [
        {
          name: 'workers',
          template: {
            spec: {
              parallelism: PODS_PER_JOBSET,
              completions: PODS_PER_JOBSET,
              backoffLimit: 0,
              template: {
                spec: {
                  ...(quartermaster ? { schedulerName: 'quartermaster' } : {}),
                  containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' }, limits: { 'nvidia.com/gpu': '1' } } }],
                },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * Scenario `jobsets`: M JobSets of 8 pods, the real JobSet and Job controllers making the pods, from the first
 * creation to every pod bound — by the stock kube-scheduler (pod by pod), then by Quartermaster (one gang job
 * per JobSet through the workload importer) on the same nodes.
 */
async function jobSetsScenario({ kc, core, names, h100Product, a100Product }: Fleet): Promise<void> {
  const pods = JOBSETS * PODS_PER_JOBSET;
  const jobSetNames = Array.from({ length: JOBSETS }, (_, i) => `js-${i}`);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  log('starting the JobSet controller and kube-controller-manager');
  const controllers = await startControllers(['jobset']);
  try {
    const create = (namespace: string, quartermaster: boolean): Promise<void> =>
      pool(jobSetNames, 16, (name) => objects.create({ ...benchJobSet(name, quartermaster), metadata: { ...benchJobSet(name, quartermaster).metadata, namespace } }));

    const ksNamespace = 'bench-kube-scheduler-jobsets';
    await core.createNamespace({ body: { metadata: { name: ksNamespace } } });
    const ks = await startStockKubeScheduler();
    log(`kube-scheduler: ${JOBSETS} JobSets × ${PODS_PER_JOBSET} pods`);
    const ksStart = performance.now();
    const ksBound = waitBound(new KubeCluster(kc, { namespace: ksNamespace }), ksNamespace, pods);
    await create(ksNamespace, false);
    await ksBound;
    const ksSeconds = (performance.now() - ksStart) / 1000;
    await ks.stop();
    log(`kube-scheduler: ${ksSeconds.toFixed(1)} s; removing its JobSets`);
    await core.deleteNamespace({ name: ksNamespace });
    for (;;) {
      const left = await core.listNamespacedPod({ namespace: ksNamespace, limit: 1 });
      if (left.items.length === 0) break;
      await core.deleteCollectionNamespacedPod({ namespace: ksNamespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const qm = await startQm('bench-js', 0, { QM_WORKER_CONCURRENCY: WORKER_CONCURRENCY }, { existingNodes: { names, h100Product, a100Product } });
    try {
      await seedTenancy(qm, { nominal: pods, borrowingLimit: 0 });
      for (;;) {
        const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items;
        if (nodes.length >= NODES) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      log(`quartermaster: ${JOBSETS} JobSets × ${PODS_PER_JOBSET} pods`);
      const qmStart = performance.now();
      const qmBound = waitBound(qm.cluster, qm.namespace, pods);
      await create(qm.namespace, true);
      await qmBound;
      const qmSeconds = (performance.now() - qmStart) / 1000;
      let gangJobs = 0;
      for (let cursor: string | null = ''; cursor !== null; ) {
        const page = (await qm.ok('GET', `/v1/jobs?limit=500${cursor ? `&cursor=${cursor}` : ''}`)) as { items: { workload?: { kind: string } }[]; nextCursor: string | null };
        gangJobs += page.items.filter((j) => j.workload?.kind === 'JobSet').length;
        cursor = page.nextCursor;
      }
      process.stdout.write(
        `${JSON.stringify({
          scenario: 'jobsets',
          jobSets: JOBSETS,
          podsPerJobSet: PODS_PER_JOBSET,
          pods,
          nodes: NODES,
          kubeSchedulerSeconds: Math.round(ksSeconds * 10) / 10,
          quartermasterSeconds: Math.round(qmSeconds * 10) / 10,
          kubeSchedulerPodsPerSec: Math.round((pods / ksSeconds) * 10) / 10,
          quartermasterPodsPerSec: Math.round((pods / qmSeconds) * 10) / 10,
          ratio: Math.round((ksSeconds / qmSeconds) * 100) / 100,
          quartermasterGangJobs: gangJobs,
          kubeSchedulerClientQps: KS_QPS ? Number(KS_QPS) : 'stock (50)',
        })}\n`,
      );
    } finally {
      await qm.close();
    }
  } finally {
    await controllers.stop();
  }
}

async function main(): Promise<void> {
  execFileSync('bash', [join(root, 'test/k8s/controlplane/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = execFileSync('bash', [join(root, 'test/k8s/controlplane/start.sh'), '--watch-pid', String(process.pid)], { encoding: 'utf8' }).trim().split('\n').pop()!;
  process.env.KUBECONFIG = join(dir, 'kubeconfig');
  process.env.QM_K8S_BIN = join(process.env.QM_K8S_CACHE ?? join(homedir(), '.cache/quartermaster/k8s-v1.34.4'), 'bin');
  // Quartermaster runs as the Helm chart's ServiceAccount (startQm renders the chart with this helm).
  process.env.QM_HELM = execFileSync('bash', [join(root, 'test/k8s/controlplane/build-helm.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(process.env.KUBECONFIG);
    const core = kc.makeApiClient(CoreV1Api);
    const h100Product = 'BENCH-H100';
    const a100Product = 'BENCH-A100';
    const names = Array.from({ length: NODES }, (_, i) => `bench-node-${String(i).padStart(4, '0')}`);
    log(`creating ${NODES} nodes`);
    await pool(names, 32, (name) => {
      const product = Number(name.slice(-4)) % 2 === 0 ? h100Product : a100Product;
      return core.createNode({ body: fakeNode(name, { labels: { 'nvidia.com/gpu.product': product }, extended: { 'nvidia.com/gpu': '8' } }) });
    });

    const fleet: Fleet = { kc, core, names, h100Product, a100Product };
    if (SCENARIOS.has('pods')) await podsScenario(fleet);
    if (SCENARIOS.has('jobsets')) await jobSetsScenario(fleet);
  } finally {
    execFileSync('bash', [join(root, 'test/k8s/controlplane/stop.sh'), dir], { stdio: 'ignore' });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:k8s failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
