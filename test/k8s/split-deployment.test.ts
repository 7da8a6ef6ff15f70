// The split deployment the Helm chart runs — `start:api`, two `start:scheduler` replicas (one leads) and
// `start:worker`, each its own process — with the real kube-scheduler configured by
// deploy/kube-scheduler/config.yaml. The extender is served by the scheduler processes (the chart's
// scheduler Service), here by the standby replica: a gang's pods are bound by kube-scheduler exactly where
// Quartermaster allocated them, an over-quota gang gets none bound, and the API process has no extender.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { createTestDatabase, type TestDatabase } from '#db';
import { KubeCluster, LABEL_JOB_ID } from '#kube';
import { spawnRole, type RoleProcess } from '../integration/scheduler/processes.js';
import { chartServiceAccount, type ChartIdentity } from './support/chart-rbac.js';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';
import { readRepoFile, startKubeScheduler, type RunningKubeScheduler } from './support/kube-scheduler.js';
import { ADMIN, eventually, kubeTestEnv } from './scheduler-harness.js';

const LEASE = 'quartermaster-scheduler';
const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('qm-split');
/** Where the chart would be installed: the Lease lives here, the jobs' pods in `namespace`. */
const releaseNamespace = uniqueName('qm-split-release');
const cluster = new KubeCluster(kc, { namespace });
const product = uniqueName('A100');
// One node named as on EKS (a DNS-1123 subdomain with dots).
const nodes = [uniqueName('split-a100-0'), uniqueName('split-a100-1'), `${uniqueName('ip-10-0-1')}.us-west-2.compute.internal`];

let db: TestDatabase;
let identity: ChartIdentity | undefined;
const processes: RoleProcess[] = [];
let apiUrl: string;
let schedulers: RoleProcess[];
let schedulerUrls: string[];
let kubeScheduler: RunningKubeScheduler | undefined;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function ok(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const gangPod = (name: string, gang: string, size: number): V1Pod => ({
  metadata: { name, annotations: { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': gang, 'quartermaster.io/gang-size': String(size), 'quartermaster.io/flavor': 'a100' } },
  spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }] },
});

beforeAll(async () => {
  await createNamespace(core, namespace);
  await createNamespace(core, releaseNamespace);
  for (const name of nodes) await core.createNode({ body: fakeNode(name, { labels: { 'nvidia.com/gpu.product': product }, extended: { 'nvidia.com/gpu': '8' } }) });
  db = await createTestDatabase({ label: 'k8s_split' });
  // Every process acts as the Helm chart's ServiceAccount, as in a cluster.
  identity = await chartServiceAccount(kc, namespace);
  const env = {
    ...kubeTestEnv('split', namespace),
    KUBECONFIG: identity.kubeconfigPath,
    DATABASE_URL: db.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info', // the child's "started"/"listening" log line carries its URL
    QM_KUBE_LEADER_LEASE: LEASE, // as the Helm chart sets it
    QM_KUBE_LEADER_LEASE_NAMESPACE: releaseNamespace, // the release's namespace, apart from the pods'
  };
  const api = spawnRole('api', env);
  processes.push(api);
  apiUrl = await api.ready;
  schedulers = [spawnRole('scheduler', env), spawnRole('scheduler', env)];
  const worker = spawnRole('worker', env);
  processes.push(...schedulers, worker);
  schedulerUrls = await Promise.all(schedulers.map((s) => s.ready));
  await worker.ready;

  await ok('PUT', '/v1/flavors/a100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': product }, memoryGiB: 80 });
  await ok('PUT', '/v1/teams/vision', { namespaces: [namespace] });
  await ok('PUT', '/v1/teams/vision/quotas/a100', { nominal: 16, borrowingLimit: 0, lendingLimit: null });
  await eventually('3 nodes synced by the scheduler processes', async () => {
    const items = (await ok('GET', '/v1/nodes')).items as { source: string }[];
    return items.filter((n) => n.source === 'kubernetes').length === 3 ? true : undefined;
  });
  expect((await ok('GET', `/v1/nodes/${nodes[2]}`)).accelerators).toBe(8);
}, 240_000);

afterAll(async () => {
  await kubeScheduler?.stop();
  await Promise.all(processes.map((p) => p.kill('SIGTERM')));
  await cleanUp(core, namespace, nodes);
  await core.deleteNamespace({ name: releaseNamespace }).catch(() => undefined);
  await identity?.cleanUp();
  await db?.drop();
}, 120_000);

describe('split deployment (api, scheduler ×2, worker) with kube-scheduler', () => {
  it('serves the extender from the scheduler processes, not the API', async () => {
    const probe = (base: string): Promise<number> =>
      fetch(`${base}/extender/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: [nodes[0]] }) }).then((r) => r.status);
    expect(await probe(apiUrl)).toBe(404);
    for (const url of schedulerUrls) expect(await probe(url)).toBe(200);
  });

  it('binds an admitted gang through kube-scheduler and the standby scheduler\'s extender, and no pod of a gang over quota', async () => {
    const leaders = await eventually('one scheduler leads', async () => {
      const flags = await Promise.all(schedulerUrls.map(async (url) => ((await (await fetch(`${url}/readyz`)).json()) as { scheduler: { leader: boolean } }).scheduler.leader));
      return flags.filter(Boolean).length === 1 ? flags : undefined;
    });
    const standby = schedulerUrls[leaders.indexOf(false)]!;
    kubeScheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
      const [extender] = config.extenders as Record<string, unknown>[];
      extender!.urlPrefix = `${standby}/extender`;
    });

    for (let i = 0; i < 2; i++) await core.createNamespacedPod({ namespace, body: gangPod(`fits-${i}`, 'fits', 2) });
    // 3 × 8 > vision's 16: never admitted.
    for (let i = 0; i < 3; i++) await core.createNamespacedPod({ namespace, body: gangPod(`over-${i}`, 'over', 3) });

    const jobOf = async (prefix: string, n: number): Promise<string | undefined> => {
      const pods = (await cluster.listPods({ namespace })).filter((p) => p.metadata!.name!.startsWith(prefix));
      const id = pods[0]?.metadata?.labels?.[LABEL_JOB_ID];
      return pods.length === n && id && pods.every((p) => p.metadata?.labels?.[LABEL_JOB_ID] === id) ? id : undefined;
    };
    const fits = await eventually('gang "fits" imported', () => jobOf('fits-', 2));
    const over = await eventually('gang "over" imported', () => jobOf('over-', 3));
    const podsOf = (job: string): Promise<V1Pod[]> => cluster.listPods({ namespace, labelSelector: `${LABEL_JOB_ID}=${job}` });
    await eventually('kube-scheduler bound gang "fits"', async () => ((await podsOf(fits)).every((p) => p.spec?.nodeName) ? true : undefined), 90_000);

    const job = await ok('GET', `/v1/jobs/${fits}`);
    const allocation = job.allocation as { replica: number; node: string }[];
    for (const pod of await podsOf(fits)) {
      expect(pod.spec?.schedulerName).toBe('default-scheduler');
      expect(pod.spec?.nodeName).toBe(allocation.find((a) => a.replica === Number(pod.metadata!.labels!['quartermaster.io/replica']))!.node);
    }
    expect(((await ok('GET', `/v1/jobs/${over}`)) as { state: string }).state).toBe('PENDING');
    expect((await podsOf(over)).filter((p) => p.spec?.nodeName)).toHaveLength(0);
    // The standby answered kube-scheduler: its extender counted filter and bind calls.
    const metrics = await (await fetch(`${standby}/metrics`)).text();
    expect(metrics).toMatch(/qm_extender_requests_total\{verb="bind",outcome="ok"\} [1-9]/);

    // Pods run (as a kubelet would report): the job follows, through the scheduler processes' pod watch.
    for (const pod of await podsOf(fits)) await cluster.patchPodStatus(pod.metadata!.name!, { phase: 'Running' }, namespace);
    await eventually('gang "fits" RUNNING', async () => ((await ok('GET', `/v1/jobs/${fits}`)).state === 'RUNNING' ? true : undefined));
  }, 200_000);

  it('elects the leader through a coordination.k8s.io Lease as well (QM_KUBE_LEADER_LEASE); the standby takes over both when the leader dies', async () => {
    const coordination = kc.makeApiClient(CoordinationV1Api);
    type Status = { scheduler: { leader: boolean; holder: string; fencingToken: string | null } };
    const status = async (url: string): Promise<Status['scheduler'] | undefined> =>
      fetch(`${url}/readyz`).then(async (r) => ((await r.json()) as Status).scheduler, () => undefined);
    const leaseHolder = async (): Promise<string | undefined> => (await coordination.readNamespacedLease({ name: LEASE, namespace: releaseNamespace })).spec?.holderIdentity;

    const before = await Promise.all(schedulerUrls.map(status));
    const leaderIndex = before.findIndex((s) => s?.leader);
    expect(leaderIndex).toBeGreaterThanOrEqual(0);
    const leader = before[leaderIndex]!;
    const standby = before[1 - leaderIndex]!;
    expect(await leaseHolder()).toBe(leader.holder);

    await schedulers[leaderIndex]!.kill('SIGKILL');
    const after = await eventually('the standby leads', async () => {
      const s = await status(schedulerUrls[1 - leaderIndex]!);
      return s?.leader ? s : undefined;
    });
    expect(after.holder).toBe(standby.holder);
    expect(BigInt(after.fencingToken!)).toBeGreaterThan(BigInt(leader.fencingToken!));
    expect(await leaseHolder()).toBe(standby.holder);

    // And it schedules: a new gang (the "fits" gang holds 16 of vision's 16, so this one borrows nothing
    // and must wait) is decided by the new leader: PENDING with a reason.
    await core.createNamespacedPod({ namespace, body: gangPod('later-0', 'later', 1) });
    const later = await eventually('gang "later" imported and decided', async () => {
      const pod = await cluster.getPod('later-0', namespace);
      const id = pod?.metadata?.labels?.[LABEL_JOB_ID];
      if (!id) return undefined;
      const job = (await ok('GET', `/v1/jobs/${id}`)) as { state: string; pending?: { code: string } };
      return job.pending?.code ? job : undefined;
    });
    expect(later.state).toBe('PENDING');
    expect(later.pending?.code).toBe('QUOTA_EXCEEDED');
  }, 120_000);
});
