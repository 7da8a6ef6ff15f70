// Quartermaster in Kubernetes mode against the test control plane: the API, the scheduler with its
// side-effect worker (Kubernetes handlers) and the cluster watchers in this process, over a fresh
// database and a unique Redis prefix; fake nodes of two flavors; a "kubelet" that marks bound pods Running.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Config, createLogger } from '#common';
import { createTestDatabase, type TestDatabase } from '#db';
import { LABEL_JOB_ID, KubeCluster } from '#kube';
import { schedulerSettingsFromEnv } from '#scheduling';
import { createApiApp, type ApiApp } from '../../apps/api/src/main.js';
import { startRole, type RunningRole } from '../../apps/scheduler/src/bootstrap.js';
import { kubernetesHandlers, startKubernetesMode, type KubernetesMode, type KubernetesWatchers } from '../../apps/scheduler/src/kubernetes/kubernetes-mode.js';
import { chartServiceAccount, type ChartIdentity } from './support/chart-rbac.js';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';

export const ADMIN = 'k8s-scheduler-admin-token-0123456789';

export interface QmEnv {
  namespace: string;
  h100Product: string;
  a100Product: string;
  nodes: string[];
  core: CoreV1Api;
  cluster: KubeCluster;
  api: ApiApp;
  url: string;
  /** The scheduler's HTTP server (with `extender`: it serves /extender/*); changes on restartScheduler. */
  readonly schedulerUrl: string | null;
  /** The extender's mutual-TLS listener (with QM_EXTENDER_TLS_* set), else null. */
  readonly extenderTlsUrl: string | null;
  db: TestDatabase;
  /** The Helm chart's ServiceAccount, which Quartermaster runs as (its kubeconfig is Quartermaster's KUBECONFIG). */
  identity: ChartIdentity;
  background: RunningRole;
  watchers: KubernetesWatchers;
  /** Stops and starts the scheduler, worker and watchers (the API stays). */
  restartScheduler(whileDown?: () => Promise<void>): Promise<void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  ok(method: string, path: string, body?: unknown): Promise<unknown>;
  jobPods(jobId: string): Promise<V1Pod[]>;
  /** Plays the kubelet once: every bound Pending pod of ours becomes Running. */
  kubelet(): Promise<number>;
  close(): Promise<void>;
}

/** Environment of Quartermaster in Kubernetes mode in these tests: the test apiserver, fast loops. */
export function kubeTestEnv(label: string, namespace: string): Record<string, string> {
  return {
    QM_ADMIN_TOKEN: ADMIN,
    QM_TOKEN_CACHE_TTL_MS: '0',
    KUBECONFIG: process.env.KUBECONFIG!,
    QM_REDIS_PREFIX: `qm-k8s-${label}-${randomBytes(4).toString('hex')}`,
    QM_LEASE_TTL_MS: '1500',
    QM_LEASE_RENEW_MS: '300',
    QM_CYCLE_DEBOUNCE_MS: '5',
    QM_CYCLE_TICK_MS: '200',
    QM_RECONCILE_EVERY_MS: '500',
    QM_SIDE_EFFECT_BACKOFF_MS: '50',
    QM_KUBE_NAMESPACE: namespace,
    QM_KUBE_GRACE_SECONDS: '0',
    QM_KUBE_IMPORT_EVERY_MS: '300',
    QM_KUBE_FLAVOR_REFRESH_MS: '300',
  };
}

export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`never happened: ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startQm(
  label: string,
  nodesPerFlavor = 4,
  extraEnv: Record<string, string> = {},
  options: { extender?: boolean; existingNodes?: { names: string[]; h100Product: string; a100Product: string }; logger?: Logger; chartArgs?: string[] } = {},
): Promise<QmEnv> {
  const kc = testKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = uniqueName(label);
  await createNamespace(core, namespace);
  const h100Product = options.existingNodes?.h100Product ?? uniqueName('H100');
  const a100Product = options.existingNodes?.a100Product ?? uniqueName('A100');
  const nodes: string[] = options.existingNodes ? [...options.existingNodes.names] : [];
  for (let i = 0; i < (options.existingNodes ? 0 : nodesPerFlavor); i++) {
    for (const [kind, product] of [['h100', h100Product], ['a100', a100Product]] as const) {
      const name = uniqueName(`${label}-${kind}-${i}`);
      nodes.push(name);
      await core.createNode({ body: fakeNode(name, { labels: { 'nvidia.com/gpu.product': product }, extended: { 'nvidia.com/gpu': '8' } }) });
    }
  }

  // Quartermaster acts as the Helm chart's ServiceAccount, so the chart's ClusterRole must grant every call it makes.
  const identity = await chartServiceAccount(kc, namespace, options.chartArgs);
  const db = await createTestDatabase({ label: label.replace(/-/g, '_') });
  const env: Record<string, string> = {
    ...kubeTestEnv(label, namespace),
    KUBECONFIG: identity.kubeconfigPath,
    LOG_LEVEL: process.env.QM_TEST_LOG_LEVEL ?? 'silent',
    ...extraEnv,
  };
  const config = Config.fromEnv(env).with({ databaseUrl: db.url, port: 0, host: '127.0.0.1' });
  const settings = schedulerSettingsFromEnv(env);
  const logger = options.logger ?? createLogger(config.logLevel, `qm-k8s-${label}`);
  const api = await createApiApp(config, { migrate: false, scheduler: settings, logger });
  const url = await api.listen();

  // As `npm start` does: watchers first, then scheduler + worker; with `extender`, the scheduler's HTTP
  // server (on a random port) serves /extender/* as in production.
  const startBackground = async (): Promise<[RunningRole, KubernetesMode]> => {
    const kube = await startKubernetesMode(config, api.database, settings.redisPrefix, logger, env);
    const background = await startRole('both', config, settings, {
      database: api.database,
      logger,
      migrate: false,
      kubernetesHandlers: kubernetesHandlers(env),
      ...(options.extender ? { port: 0, routes: (host: Parameters<typeof kube.routes>[0]) => kube.routes(host) } : { port: null }),
    });
    return [background, kube];
  };
  let [background, watchers] = await startBackground();
  const cluster = new KubeCluster(kc, { namespace });

  const request: QmEnv['request'] = async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
  const qm: QmEnv = {
    namespace,
    h100Product,
    a100Product,
    nodes,
    core,
    cluster,
    api,
    url,
    db,
    identity,
    get background() {
      return background;
    },
    get watchers() {
      return watchers;
    },
    get schedulerUrl() {
      return background.url;
    },
    get extenderTlsUrl() {
      return watchers.extenderTls?.url ?? null;
    },
    async restartScheduler(whileDown) {
      await background.stop();
      await watchers.stop();
      await whileDown?.();
      [background, watchers] = await startBackground();
    },
    request,
    async ok(method, path, body) {
      const r = await request(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as unknown;
    },
    jobPods: (jobId) => cluster.listPods({ allNamespaces: true, labelSelector: `${LABEL_JOB_ID}=${jobId}` }),
    async kubelet() {
      const pods = await cluster.listPods({ namespace, fieldSelector: 'spec.nodeName!=,status.phase=Pending' });
      let n = 0;
      for (const pod of pods) {
        if (pod.metadata?.deletionTimestamp) continue;
        await cluster.patchPodStatus(pod.metadata!.name!, { phase: 'Running' }, namespace).catch(() => undefined);
        n++;
      }
      return n;
    },
    async close() {
      await background.stop();
      await watchers.stop();
      await api.close();
      // Nodes the caller brought (existingNodes: a benchmark's fleet, shared by its scenarios) stay.
      await cleanUp(core, namespace, options.existingNodes ? [] : nodes);
      await identity.cleanUp();
      await db.drop();
    },
  };
  return qm;
}

/** Flavors h100 and a100 selecting this environment's fake nodes; cohort, teams and quotas. */
export async function seedTenancy(qm: Pick<QmEnv, 'ok' | 'h100Product' | 'a100Product' | 'namespace'>, quota = { nominal: 32, borrowingLimit: 0 }): Promise<void> {
  await qm.ok('PUT', '/v1/cohorts/research', { description: 'pool' });
  await qm.ok('PUT', '/v1/flavors/h100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': qm.h100Product }, memoryGiB: 80, relativeSpeed: 2, costPerHour: 4 });
  await qm.ok('PUT', '/v1/flavors/a100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': qm.a100Product }, memoryGiB: 80, relativeSpeed: 1, costPerHour: 2 });
  for (const team of ['vision', 'nlp']) {
    // Both take annotated gangs and workloads from this environment's namespace.
    await qm.ok('PUT', `/v1/teams/${team}`, { cohort: 'research', preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, namespaces: [qm.namespace] });
    for (const flavor of ['h100', 'a100']) await qm.ok('PUT', `/v1/teams/${team}/quotas/${flavor}`, { nominal: quota.nominal, borrowingLimit: quota.borrowingLimit, lendingLimit: null });
  }
}

export function gangBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'gang',
    team: 'vision',
    kind: 'training',
    priority: 10,
    preemptible: true,
    replicas: 2,
    acceleratorsPerReplica: 8,
    flavors: ['h100'],
    template: { image: 'busybox', command: ['sleep', '3600'], cpuMillis: 1000, memoryMiB: 1024 },
    ...overrides,
  };
}
