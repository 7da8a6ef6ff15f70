// npm run bench:k8s — pods bound per second on one real control plane (etcd + kube-apiserver v1.34, no
// kubelet) with fake nodes, two scenarios, one JSON line each. Each scenario runs kube-scheduler twice — stock
// (its client's default rate limit, QPS 50 / burst 100) and with the limit lifted (QPS_LIFTED, burst twice
// that) — then Quartermaster, one after another on the same nodes, and reports both ratios (issue #15: ≥ 2× on
// both), the load average beside each run, and the API server's requests per pod of each run (writes, reads) (from its
// apiserver_request_total: every client's — the controllers' too — by verb and resource):
// - `pods`: kube-scheduler binds N single-GPU pods; Quartermaster (REST submission → cycle → pods created and
//   bound through pods/binding) binds N single-GPU jobs' pods.
// - `jobsets`: M JobSets of 8 single-GPU pods each (one replicatedJob, parallelism 8) made into pods by the real
//   JobSet and Job controllers, from creation to every pod bound: the stock kube-scheduler (pod by pod, no
//   gangs) vs Quartermaster (the JobSets carry the team label and name its scheduler: each becomes one gang
//   job through the workload importer, admitted whole, its pods bound once all exist).
//   QM_BENCH_SCENARIOS (pods,jobsets), QM_BENCH_NODES (500), QM_BENCH_PODS (4000), QM_BENCH_JOBSETS (100),
//   QM_BENCH_KS_QPS (the lifted kube-scheduler's client QPS, 1000), QM_WORKER_CONCURRENCY (unset = the
//   service's default).
import { execFileSync } from 'node:child_process';
import { request, type RequestOptions } from 'node:https';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { KubeCluster } from '#kube';
import { schedulerSettingsFromEnv } from '#scheduling';
import { startKubeScheduler } from '../../test/k8s/support/kube-scheduler.js';
import { fakeNode } from '../../test/k8s/support/cluster.js';
import { seedTenancy } from '../../test/k8s/scheduler-harness.js';
import { startQmService } from './qm-service.js';
import { startControllers } from '../../test/k8s/controllers/controllers.js';

const NODES = Number(process.env.QM_BENCH_NODES ?? 500);
const PODS = Number(process.env.QM_BENCH_PODS ?? 4000);
const JOBSETS = Number(process.env.QM_BENCH_JOBSETS ?? 100);
const SCENARIOS = new Set((process.env.QM_BENCH_SCENARIOS ?? 'pods,jobsets').split(',').map((s) => s.trim()));
const QPS_LIFTED = Number(process.env.QM_BENCH_KS_QPS ?? 1000);
const WORKER_CONCURRENCY = String(schedulerSettingsFromEnv(process.env).workerConcurrency);
// No kubelet runs, so no pod ever becomes Running and every admitted job stays BINDING: the gang timeout
// (QM_GANG_TIMEOUT_MS, 5 min) would requeue jobs and delete their pods in a long (loaded) run, work kube-scheduler
// never does. The bench measures binding, so the timeout is an hour here.
// The k8s tests' environment (kubeTestEnv) turns the API's token cache off and reconciles every 500 ms, for
// tests; the bench runs them at the service's defaults (5 s each), as deployed.
const NO_GANG_TIMEOUT = { QM_GANG_TIMEOUT_MS: '3600000', QM_TOKEN_CACHE_TTL_MS: '5000', QM_RECONCILE_EVERY_MS: '5000' };
const root = new URL('../../', import.meta.url).pathname;

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * Resolves when `n` pods of the namespace are bound, with the seconds from `started` to the moment the n-th pod
 * existed (its creation seen by the watch): the lower bound any scheduler's time has in that run, since no pod
 * is bound before it exists. The caller reads the clock for the binds.
 */
async function waitBound(cluster: KubeCluster, namespace: string, n: number, started: number): Promise<{ createdSeconds: number }> {
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const bound = new Set<string>();
  const seen = new Set<string>();
  let createdSeconds = Number.NaN;
  const see = (pod: V1Pod): void => {
    const name = pod.metadata!.name!;
    if (!seen.has(name)) {
      seen.add(name);
      if (seen.size === n) createdSeconds = (performance.now() - started) / 1000;
    }
    if (pod.spec?.nodeName) bound.add(name);
    if (bound.size >= n) done();
  };
  const watch = await cluster.watchPods({ onAdd: see, onUpdate: see }, { namespace });
  for (const pod of watch.list()) see(pod);
  await finished;
  await watch.stop();
  return { createdSeconds };
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

/** kube-scheduler with its stock client rate limit (`qps` null), or with QPS `qps` and burst twice that. */
function startKs(qps: number | null): ReturnType<typeof startKubeScheduler> {
  return startKubeScheduler(
    'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: default-scheduler\n',
    (config) => {
      if (qps !== null) config.clientConnection = { ...(config.clientConnection as object), qps, burst: qps * 2 };
    },
  );
}

const KS_RUNS = [
  { key: 'stock', qps: null },
  { key: 'lifted', qps: QPS_LIFTED },
] as const;

/** `uptime`'s load averages (1, 5, 15 min), rounded. */
function load(): number[] {
  return loadavg().map((l) => Math.round(l * 10) / 10);
}

/** The API server's requests so far (apiserver_request_total), by `VERB resource[/subresource]` (WATCH left out). */
async function apiRequests(kc: KubeConfig): Promise<Map<string, number>> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const options: RequestOptions = { host: server.hostname, port: server.port, path: '/metrics', method: 'GET' };
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
  const writes = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.verb === 'WATCH' || labels.verb === 'CONNECT') continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    writes.set(key, (writes.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return writes;
}

interface PerPod {
  writes: number;
  reads: number;
  /** Requests per pod by `VERB resource[/subresource]`, those of at least 0.05 per pod. */
  by: Record<string, number>;
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** API requests per pod between two apiRequests readings: writes, reads (GET, LIST) and the largest kinds. */
function perPod(before: Map<string, number>, after: Map<string, number>, pods: number): PerPod {
  const by: Record<string, number> = {};
  let writes = 0;
  let reads = 0;
  const round = (n: number): number => Math.round((n / pods) * 100) / 100;
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d <= 0) continue;
    if (WRITE_VERBS.has(key.split(' ')[0]!)) writes += d;
    else reads += d;
    if (d / pods >= 0.05) by[key] = round(d);
  }
  return { writes: round(writes), reads: round(reads), by };
}

interface KsRun {
  seconds: number;
  /** From the start to the last pod's creation (the lower bound of `seconds`; see waitBound). */
  createdSeconds: number;
  load: number[];
  requestsPerPod: PerPod;
}

/**
 * When the last pod was created and how long the binds went on after it (`afterLastPodSeconds`): a scheduler
 * cannot finish before its last pod exists, so where a run's time is mostly creation — the bench's own POSTs, or
 * the JobSet and Job controllers — no scheduler can be much faster than that run. In `pods` Quartermaster's
 * creation is its own (the REST submission, then the pods it makes already bound): its `createdSeconds` is the
 * last bound pod's creation, so its tail is near zero and `submitSeconds` is the figure to read beside it.
 */
function tail(run: { seconds: number; createdSeconds: number }): { allPodsCreatedSeconds: number; afterLastPodSeconds: number } {
  return { allPodsCreatedSeconds: Math.round(run.createdSeconds * 10) / 10, afterLastPodSeconds: Math.round((run.seconds - run.createdSeconds) * 10) / 10 };
}

/** The two kube-scheduler figures and ratios of a scenario, against Quartermaster's time. */
function versus(pods: number, ks: Record<'stock' | 'lifted', KsRun>, qmSeconds: number): Record<string, unknown> {
  const rate = (seconds: number): number => Math.round((pods / seconds) * 10) / 10;
  return {
    kubeSchedulerStock: { seconds: Math.round(ks.stock.seconds * 10) / 10, ...tail(ks.stock), podsPerSec: rate(ks.stock.seconds), load: ks.stock.load, requestsPerPod: ks.stock.requestsPerPod },
    kubeSchedulerLifted: { qps: QPS_LIFTED, seconds: Math.round(ks.lifted.seconds * 10) / 10, ...tail(ks.lifted), podsPerSec: rate(ks.lifted.seconds), load: ks.lifted.load, requestsPerPod: ks.lifted.requestsPerPod },
    ratioVsStock: Math.round((ks.stock.seconds / qmSeconds) * 100) / 100,
    ratioVsLifted: Math.round((ks.lifted.seconds / qmSeconds) * 100) / 100,
  };
}

/** Deletes a namespace's pods and waits until none is left. */
async function emptyNamespace(core: CoreV1Api, namespace: string): Promise<void> {
  for (;;) {
    await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    const left = await core.listNamespacedPod({ namespace, limit: 1 });
    if (left.items.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Scenario `pods`: N single-GPU pods (kube-scheduler, stock then lifted) vs N single-GPU jobs submitted over REST (Quartermaster). */
async function podsScenario({ kc, core, h100Product, a100Product }: Fleet): Promise<void> {
  const podNames = Array.from({ length: PODS }, (_, i) => `p-${i}`);
  // 1. kube-scheduler alone, stock and with its client's rate limit lifted.
  const ks = {} as Record<'stock' | 'lifted', KsRun>;
  for (const { key, qps } of KS_RUNS) {
    const namespace = `bench-kube-scheduler-${key}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const scheduler = await startKs(qps);
    log(`kube-scheduler (${key}): ${PODS} pods`);
    const before = await apiRequests(kc);
    const started = performance.now();
    const bound = waitBound(new KubeCluster(kc, { namespace }), namespace, PODS, started);
    await pool(podNames, 64, (name) =>
      core.createNamespacedPod({
        namespace,
        body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' }, limits: { 'nvidia.com/gpu': '1' } } }] } },
      }),
    );
    const { createdSeconds } = await bound;
    const seconds = (performance.now() - started) / 1000;
    ks[key] = { seconds, createdSeconds, load: load(), requestsPerPod: perPod(before, await apiRequests(kc), PODS) };
    await scheduler.stop();
    log(`kube-scheduler (${key}): ${seconds.toFixed(1)} s; removing its pods`);
    await emptyNamespace(core, namespace);
  }

  // 2. Quartermaster.
  const qm = await startQmService(kc, 'bench', { ...NO_GANG_TIMEOUT, QM_KUBE_IMPORT_EVERY_MS: '0', QM_WORKER_CONCURRENCY: WORKER_CONCURRENCY }, { h100Product, a100Product });
  try {
    await seedTenancy(qm, { nominal: PODS, borrowingLimit: 0 });
    for (;;) {
      const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items;
      if (nodes.length >= NODES) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log(`quartermaster: ${PODS} single-GPU jobs`);
    const before = await apiRequests(kc);
    const qmStart = performance.now();
    const qmBound = waitBound(qm.cluster, qm.namespace, PODS, qmStart);
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
    const qmCreated = await qmBound;
    const qmSeconds = (performance.now() - qmStart) / 1000;
    const qmLoad = load();
    process.stdout.write(
      `${JSON.stringify({
        scenario: 'pods',
        pods: PODS,
        nodes: NODES,
        ...versus(PODS, ks, qmSeconds),
        quartermaster: {
          seconds: Math.round(qmSeconds * 10) / 10,
          ...tail({ seconds: qmSeconds, createdSeconds: qmCreated.createdSeconds }),
          podsPerSec: Math.round((PODS / qmSeconds) * 10) / 10,
          load: qmLoad,
          requestsPerPod: perPod(before, await apiRequests(kc), PODS),
          submitSeconds: Math.round(qmSubmitSeconds * 10) / 10,
          workerConcurrency: Number(WORKER_CONCURRENCY),
        },
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
async function jobSetsScenario({ kc, core, h100Product, a100Product }: Fleet): Promise<void> {
  const pods = JOBSETS * PODS_PER_JOBSET;
  const jobSetNames = Array.from({ length: JOBSETS }, (_, i) => `js-${i}`);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  log('starting the JobSet controller and kube-controller-manager');
  const controllers = await startControllers(['jobset']);
  try {
    const create = (namespace: string, quartermaster: boolean): Promise<void> =>
      pool(jobSetNames, 16, (name) => objects.create({ ...benchJobSet(name, quartermaster), metadata: { ...benchJobSet(name, quartermaster).metadata, namespace } }));

    const ks = {} as Record<'stock' | 'lifted', KsRun>;
    for (const { key, qps } of KS_RUNS) {
      const namespace = `bench-kube-scheduler-jobsets-${key}`;
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const scheduler = await startKs(qps);
      log(`kube-scheduler (${key}): ${JOBSETS} JobSets × ${PODS_PER_JOBSET} pods`);
      const before = await apiRequests(kc);
      const started = performance.now();
      const bound = waitBound(new KubeCluster(kc, { namespace }), namespace, pods, started);
      await create(namespace, false);
      const { createdSeconds } = await bound;
      const seconds = (performance.now() - started) / 1000;
      ks[key] = { seconds, createdSeconds, load: load(), requestsPerPod: perPod(before, await apiRequests(kc), pods) };
      await scheduler.stop();
      log(`kube-scheduler (${key}): ${seconds.toFixed(1)} s; removing its JobSets`);
      // The JobSets go first (their controllers would make the pods again), then whatever pods are left.
      await pool(jobSetNames, 16, (name) =>
        objects.delete({ apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', metadata: { name, namespace } }, undefined, undefined, 0, undefined, 'Background').catch(() => undefined),
      );
      await emptyNamespace(core, namespace);
    }

    const qm = await startQmService(kc, 'bench-js', { ...NO_GANG_TIMEOUT, QM_WORKER_CONCURRENCY: WORKER_CONCURRENCY }, { h100Product, a100Product });
    try {
      await seedTenancy(qm, { nominal: pods, borrowingLimit: 0 });
      for (;;) {
        const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items;
        if (nodes.length >= NODES) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      log(`quartermaster: ${JOBSETS} JobSets × ${PODS_PER_JOBSET} pods`);
      const before = await apiRequests(kc);
      const qmStart = performance.now();
      const qmBound = waitBound(qm.cluster, qm.namespace, pods, qmStart);
      await create(qm.namespace, true);
      const qmCreated = await qmBound;
      const qmSeconds = (performance.now() - qmStart) / 1000;
      const qmLoad = load();
      const qmRequests = perPod(before, await apiRequests(kc), pods);
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
          ...versus(pods, ks, qmSeconds),
          quartermaster: {
            seconds: Math.round(qmSeconds * 10) / 10,
            ...tail({ seconds: qmSeconds, createdSeconds: qmCreated.createdSeconds }),
            podsPerSec: Math.round((pods / qmSeconds) * 10) / 10,
            load: qmLoad,
            requestsPerPod: qmRequests,
            gangJobs,
          },
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
  // Quartermaster runs as the Helm chart's ServiceAccount (startQmService renders the chart with this helm).
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
