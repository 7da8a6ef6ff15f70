// npm run bench:k8s:kueue — Quartermaster against Kueue v0.17 + kube-scheduler on one control plane (issue #28).
//
// One control plane (etcd + kube-apiserver v1.34, no kubelet), NODES fake nodes of 8 GPUs (one flavor), the
// real kube-controller-manager (job controller, client QPS lifted to 200/400) and JobSet controller, and two
// stacks side by side, each left running while the other is measured:
// - Kueue (build-kueue.sh) with its stock client limits (QPS 50 / burst 100) and, restarted, lifted (QPS
//   QM_BENCH_KUEUE_QPS, burst twice that), its job and JobSet webhooks registered; kube-scheduler behind it
//   with its client limit lifted (QM_BENCH_KS_QPS) in every run. Four ClusterQueues (one per team, cohort
//   `research`, reclaimWithinCohort: Any, nominal NODES×8/4 GPUs, borrowing unlimited), a LocalQueue in each
//   team's namespace; the workloads carry the queue-name label (Kueue's webhook suspends them).
// - Quartermaster as bench:k8s deploys it (`npm start` from the sources in its own process, the Helm chart's
//   ServiceAccount, own-scheduler mode; the same environment as bench:k8s's jobsets scenario): four teams in
//   cohort `research` with the same nominal quota, reclaimWithinCohort: Any; the workloads carry the team label
//   and `schedulerName: quartermaster`.
// A fake kubelet removes terminating pods (gracePeriodSeconds 0) QM_BENCH_KUBELET_GRACE_MS after their deletion,
// for both stacks.
//
// Figures, one JSON line per pair of runs (Quartermaster, then Kueue, in the same load window):
// (a) `bind`: GANGS indexed Jobs or JobSets of 8 or 32 one-GPU pods, spread over the four teams, created
//     concurrently (16 in flight); the clock starts when the LAST create has returned and stops when every pod
//     is bound (`seconds`); `fromFirstCreateSeconds` beside it.
// (b) `reclaim`: the borrower team fills the whole cluster (its quota and the other three's) with gangs of 8;
//     once all are bound, a lender team submits one gang of 8: its create → its 8 pods bound.
// (c) `requestsPerPod` of each run: the API server's audit log (kube-apiserver restarted with an audit policy
//     at Metadata level), requests from the first create to the last bind by client (Quartermaster's
//     ServiceAccount; the others by user agent) per pod bound, writes and reads (get/list); in `reclaim`, from
//     the lender's create to its last bind, per lender pod (the victim's eviction included).
//     `requestsPerPodTotal`: `stack` (Quartermaster; Kueue + kube-scheduler) and `allClients` (every client but
//     the bench's own creates, deletes and fake-kubelet removals: the Job/JobSet controllers and GC included).
// Each line carries `uptime`'s load beside each figure and the ratio Kueue ÷ Quartermaster of that pair.
//
//   QM_BENCH_REPS (3), QM_BENCH_NODES (64), QM_BENCH_KQ_PODS (pods per `bind` run, 256),
//   QM_BENCH_KQ_SHAPES (job-8,job-32,jobset-8,jobset-32), QM_BENCH_KQ_SCENARIOS (bind,reclaim),
//   QM_BENCH_KUEUE_MODES (stock,lifted), QM_BENCH_KUEUE_QPS (1000), QM_BENCH_KS_QPS (1000),
//   QM_BENCH_KUBELET_GRACE_MS (1000), QM_BENCH_AUDIT (1; 0 = no audit log, no per-client figures),
//   QM_BENCH_KEEP (1 = keep the control plane's directory and logs).
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { KubeCluster } from '#kube';
import { schedulerSettingsFromEnv } from '#scheduling';
import { startKubeScheduler } from '../../test/k8s/support/kube-scheduler.js';
import { fakeNode } from '../../test/k8s/support/cluster.js';
import { startControllers } from '../../test/k8s/controllers/controllers.js';
import { startQmService, type QmService } from './qm-service.js';
import { KUEUE_NAMESPACE_LABEL, QUEUE_NAME_LABEL, buildKueue, createKueueQueues, installKueueCrds, kueueWorkloads, startKueue, type RunningKueue } from './kueue.js';

const REPS = Number(process.env.QM_BENCH_REPS ?? 3);
const NODES = Number(process.env.QM_BENCH_NODES ?? 64);
const BIND_PODS = Number(process.env.QM_BENCH_KQ_PODS ?? 256);
const SHAPES = (process.env.QM_BENCH_KQ_SHAPES ?? 'job-8,job-32,jobset-8,jobset-32').split(',').map((s) => s.trim());
const SCENARIOS = new Set((process.env.QM_BENCH_KQ_SCENARIOS ?? 'bind,reclaim').split(',').map((s) => s.trim()));
const KUEUE_MODES = (process.env.QM_BENCH_KUEUE_MODES ?? 'stock,lifted').split(',').map((s) => s.trim()) as ('stock' | 'lifted')[];
const KUEUE_QPS = Number(process.env.QM_BENCH_KUEUE_QPS ?? 1000);
const KS_QPS = Number(process.env.QM_BENCH_KS_QPS ?? 1000);
const KUBELET_GRACE_MS = Number(process.env.QM_BENCH_KUBELET_GRACE_MS ?? 1000);
const AUDIT = process.env.QM_BENCH_AUDIT !== '0';
const KEEP = process.env.QM_BENCH_KEEP === '1';
const GPUS_PER_NODE = 8;
const TEAMS = ['team-a', 'team-b', 'team-c', 'team-d'];
const NOMINAL = (NODES * GPUS_PER_NODE) / TEAMS.length;
const PRODUCT = 'BENCH-KQ-H100';
const RUN_LABEL = 'qm-bench/run';
const RUN_TIMEOUT_MS = 300_000;
const WORKER_CONCURRENCY = String(schedulerSettingsFromEnv(process.env).workerConcurrency);
// As bench:k8s (see NO_GANG_TIMEOUT there): no kubelet marks pods Running, so no gang timeout; service-default
// token cache and reconcile period. Evictions and deletions use the pods' own grace period (unset), as Kueue's
// do: the fake kubelet applies the same grace to both.
const QM_ENV = { QM_GANG_TIMEOUT_MS: '3600000', QM_TOKEN_CACHE_TTL_MS: '5000', QM_RECONCILE_EVERY_MS: '5000', QM_KUBE_GRACE_SECONDS: '', QM_WORKER_CONCURRENCY: WORKER_CONCURRENCY };
const root = new URL('../../', import.meta.url).pathname;

function log(message: string): void {
  process.stderr.write(`bench:k8s:kueue ${new Date().toISOString()} ${message}\n`);
}

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** `uptime`'s load averages (1, 5, 15 min), rounded. */
function load(): number[] {
  return loadavg().map((l) => Math.round(l * 10) / 10);
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

type Stack = 'quartermaster' | 'kueue';
type Kind = 'Job' | 'JobSet';

interface Gang {
  name: string;
  namespace: string;
  team: string;
  pods: number;
}

/** An indexed Job of `pods` one-GPU pods, or a JobSet of one such Job, for Kueue (queue-name label) or Quartermaster (team label, its scheduler). */
function workload(kind: Kind, gang: Gang, stack: Stack, run: string): KubernetesObject & { spec: unknown } {
  const labels: Record<string, string> = stack === 'kueue' ? { [QUEUE_NAME_LABEL]: 'lq' } : { 'quartermaster.io/team': gang.team };
  const jobSpec = {
    parallelism: gang.pods,
    completions: gang.pods,
    completionMode: 'Indexed',
    backoffLimit: 0,
    template: {
      metadata: { labels: { [RUN_LABEL]: run } },
      spec: {
        restartPolicy: 'Never',
        ...(stack === 'quartermaster' ? { schedulerName: 'quartermaster' } : {}),
        containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '1' } } }],
      },
    },
  };
  const metadata = { name: gang.name, namespace: gang.namespace, labels };
  if (kind === 'Job') return { apiVersion: 'batch/v1', kind: 'Job', metadata, spec: jobSpec };
  return { apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', metadata, spec: { replicatedJobs: [{ name: 'w', replicas: 1, template: { spec: jobSpec } }] } };
}

/**
 * Watches the pods labelled with `run` in every namespace. `bound(names?, n)` resolves at the moment `n` of them
 * (of those named by the predicate) have a node, with performance.now() at that moment.
 */
async function watchRun(cluster: KubeCluster, run: string) {
  const bound = new Map<string, number>();
  const waiters: { n: number; filter: (pod: V1Pod) => boolean; seen: Set<string>; resolve: (at: number) => void }[] = [];
  const see = (pod: V1Pod): void => {
    if (!pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return;
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    const now = performance.now();
    if (!bound.has(key)) bound.set(key, now);
    for (const w of waiters) {
      if (w.seen.has(key) || !w.filter(pod)) continue;
      w.seen.add(key);
      if (w.seen.size >= w.n) w.resolve(now);
    }
  };
  const watch = await cluster.watchPods({ onAdd: see, onUpdate: see }, { allNamespaces: true, labelSelector: `${RUN_LABEL}=${run}` });
  return {
    bound(n: number, filter: (pod: V1Pod) => boolean = () => true): Promise<number> {
      return new Promise<number>((resolve, reject) => {
        const w = { n, filter, seen: new Set<string>(), resolve };
        waiters.push(w);
        for (const pod of watch.list()) see(pod);
        setTimeout(() => reject(new Error(`${run}: ${w.seen.size}/${n} pods bound after ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS).unref();
      });
    },
    stop: () => watch.stop(),
  };
}

// ---- (c) the API server's audit log ---------------------------------------------------------------------------

/**
 * Restarts kube-apiserver with a Metadata-level audit policy logging to DIR/audit.log; returns its path. The
 * log must not rotate within a run (its offsets are read around each run): --audit-log-maxsize 0 would mean
 * lumberjack's default of 100 MB, which a full run passes, so the limit is ~100 GB.
 */
function enableAudit(dir: string): string {
  const policy = join(dir, 'audit-policy.yaml');
  const path = join(dir, 'audit.log');
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["RequestReceived", "ResponseStarted"]\nrules:\n  - level: Metadata\n');
  const cmd = join(dir, 'kube-apiserver.cmd');
  writeFileSync(cmd, `${readFileSync(cmd, 'utf8').trimEnd()} --audit-policy-file ${policy} --audit-log-path ${path} --audit-log-format json --audit-log-maxsize 100000 `);
  execFileSync('bash', [join(root, 'test/k8s/controlplane/restart-component.sh'), dir, 'kube-apiserver'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return path;
}

function auditOffset(path: string | null): number {
  if (!path) return 0;
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

interface ClientRequests {
  writes: number;
  reads: number;
  /** Per pod, by `verb resource[/subresource]`, those of at least 0.05 per pod. */
  by: Record<string, number>;
}

/** Requests per pod between two offsets of the audit log, by client (WATCH left out). */
function auditPerPod(path: string | null, from: number, to: number, pods: number, qmUser: string | null): Record<string, ClientRequests> | null {
  if (!path || to <= from) return null;
  const fd = openSync(path, 'r');
  const buffer = Buffer.alloc(to - from);
  readSync(fd, buffer, 0, buffer.length, from);
  closeSync(fd);
  const counts = new Map<string, Map<string, number>>();
  for (const line of buffer.toString('utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { stage: string; verb: string; requestURI?: string; user?: { username?: string }; userAgent?: string; objectRef?: { resource?: string; subresource?: string } };
    if (e.stage !== 'ResponseComplete' || e.verb === 'watch') continue;
    const user = e.user?.username ?? '';
    let client: string;
    if (qmUser && user === qmUser) client = 'quartermaster';
    else if (user.startsWith('system:serviceaccount:')) client = 'quartermaster';
    else {
      const agent = e.userAgent ?? '';
      const product = agent.split('/')[0]!.trim() || 'unknown';
      // kube-controller-manager's controllers name themselves after the last slash.
      client = product === 'kube-controller-manager' ? `kube-controller-manager/${agent.split('/').pop()}` : product === 'node' || product.startsWith('node-fetch') || product === 'undici' ? 'bench' : product;
    }
    // Non-resource requests (discovery such as GET /apis/batch/v1, /readyz) by their path.
    const key = e.objectRef?.resource ? `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}` : `${e.verb} ${(e.requestURI ?? '?').split('?')[0]}`;
    const m = counts.get(client) ?? new Map<string, number>();
    m.set(key, (m.get(key) ?? 0) + 1);
    counts.set(client, m);
  }
  const out: Record<string, ClientRequests> = {};
  for (const [client, m] of [...counts].sort()) {
    let writes = 0;
    let reads = 0;
    const by: Record<string, number> = {};
    for (const [key, n] of m) {
      if (WRITE_VERBS.has(key.split(' ')[0]!)) writes += n;
      else reads += n;
      if (n / pods >= 0.05) by[key] = round(n / pods);
    }
    out[client] = { writes: round(writes / pods), reads: round(reads / pods), by };
  }
  return out;
}

/** The clients that are a stack's own scheduling: Quartermaster; Kueue and the kube-scheduler that binds for it. */
const STACK_CLIENTS: Record<Stack, string[]> = { quartermaster: ['quartermaster'], kueue: ['kueue', 'kube-scheduler'] };

/**
 * Sums of a run's requests per pod: `stack`, the stack's own clients (STACK_CLIENTS); `allClients`, every
 * client but the bench's own (its creates and deletes, and the fake kubelet's pod removals) and the other
 * stack's (left running idle beside) — the Job and JobSet controllers and the garbage collector included,
 * whose work differs with the stack.
 */
function requestTotals(requests: Record<string, ClientRequests> | null, stack: Stack): { stack: { writes: number; reads: number }; allClients: { writes: number; reads: number } } | null {
  if (!requests) return null;
  const sum = (clients: string[]): { writes: number; reads: number } => ({
    writes: round(clients.reduce((s, c) => s + (requests[c]?.writes ?? 0), 0)),
    reads: round(clients.reduce((s, c) => s + (requests[c]?.reads ?? 0), 0)),
  });
  const other = STACK_CLIENTS[stack === 'kueue' ? 'quartermaster' : 'kueue'];
  return { stack: sum(STACK_CLIENTS[stack]), allClients: sum(Object.keys(requests).filter((c) => c !== 'bench' && !other.includes(c))) };
}

/** The figures of one stack's run. */
interface RunFigures {
  seconds: number;
  fromFirstCreateSeconds: number;
  createSeconds: number;
  load: number[];
  requestsPerPodTotal: ReturnType<typeof requestTotals>;
  requestsPerPod: Record<string, ClientRequests> | null;
}

/** A run's times (first create, last create, all bound; performance.now() ms), the load, and the API requests per pod since `auditFrom`. */
function runFigures(bench: Bench, stack: Parameters<typeof requestTotals>[1], at: { first: number; last: number; done: number }, auditFrom: number, pods: number): RunFigures {
  const requestsPerPod = auditPerPod(bench.audit, auditFrom, auditOffset(bench.audit), pods, bench.qmUser);
  return {
    seconds: round((at.done - at.last) / 1000),
    fromFirstCreateSeconds: round((at.done - at.first) / 1000),
    createSeconds: round((at.last - at.first) / 1000),
    load: load(),
    requestsPerPodTotal: requestTotals(requestsPerPod, stack),
    requestsPerPod,
  };
}

interface Bench {
  kc: KubeConfig;
  core: CoreV1Api;
  objects: KubernetesObjectApi;
  cluster: KubeCluster;
  qm: QmService;
  qmUser: string | null;
  kueueNamespaces: string[];
  audit: string | null;
  serial: number;
}

const gangNamespace = (bench: Bench, stack: Stack, team: string): string => (stack === 'quartermaster' ? bench.qm.namespace : bench.kueueNamespaces[TEAMS.indexOf(team)]!);

/** Deletes the run's workloads and pods and waits until no pod, and (Kueue) no Workload, of the run is left. */
async function cleanUpRun(bench: Bench, stack: Stack, kind: Kind, gangs: readonly Gang[], run: string): Promise<void> {
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'jobset.x-k8s.io/v1alpha2';
  await pool(gangs, 16, (g) => bench.objects.delete({ apiVersion, kind, metadata: { name: g.name, namespace: g.namespace } }, undefined, undefined, 0, undefined, 'Background').catch(() => undefined));
  const namespaces = [...new Set(gangs.map((g) => g.namespace))];
  const deadline = Date.now() + 120_000;
  for (;;) {
    for (const namespace of namespaces) await bench.core.deleteCollectionNamespacedPod({ namespace, labelSelector: `${RUN_LABEL}=${run}`, gracePeriodSeconds: 0 }).catch(() => undefined);
    const left = await bench.core.listPodForAllNamespaces({ labelSelector: `${RUN_LABEL}=${run}`, limit: 1 });
    const workloads = stack === 'kueue' ? await kueueWorkloads(bench.kc, bench.kueueNamespaces) : 0;
    if (left.items.length === 0 && workloads === 0) break;
    if (Date.now() > deadline) {
      log(`clean-up of ${run}: ${left.items.length ? 'pods' : `${workloads} workloads`} still there after 120 s; going on`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (stack === 'quartermaster') {
    // Quartermaster releases the quota when it sees the workloads gone: wait for no team usage.
    for (let i = 0; i < 240; i++) {
      let busy = 0;
      for (const team of TEAMS) {
        const t = (await bench.qm.ok('GET', `/v1/teams/${team}`)) as { quotas: { used: number }[] };
        busy += t.quotas.reduce((s, q) => s + q.used, 0);
      }
      if (busy === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** (a) One `bind` run of one stack: `gangs` workloads of `size` pods created at once; last create → all bound. */
async function bindRun(bench: Bench, stack: Stack, kind: Kind, size: number, tag: string): Promise<RunFigures> {
  const run = `${tag}-${stack === 'quartermaster' ? 'qm' : 'kq'}-${bench.serial++}`;
  const count = Math.max(1, Math.round(BIND_PODS / size));
  const gangs: Gang[] = Array.from({ length: count }, (_, i) => {
    const team = TEAMS[i % TEAMS.length]!;
    return { name: `${run}-${i}`, namespace: gangNamespace(bench, stack, team), team, pods: size };
  });
  const pods = count * size;
  const watch = await watchRun(bench.cluster, run);
  try {
    const auditFrom = auditOffset(bench.audit);
    const all = watch.bound(pods);
    const first = performance.now();
    await pool(gangs, 16, (g) => bench.objects.create(workload(kind, g, stack, run)));
    const last = performance.now();
    const figures = runFigures(bench, stack, { first, last, done: await all }, auditFrom, pods);
    log(`${run}: ${kind} ×${count} of ${size}: ${figures.seconds} s after the last create (${figures.fromFirstCreateSeconds} s from the first), load ${figures.load[0]}`);
    return figures;
  } finally {
    await watch.stop();
    await cleanUpRun(bench, stack, kind, gangs, run);
  }
}

/**
 * (b) One `reclaim` run of one stack: the borrower (team-a) fills the whole cluster with Jobs of 8 (its own
 * quota and the other three teams'); once all are bound, the lender (team-b) submits one Job of 8: its create →
 * its pods bound. The victim's pods go away through the fake kubelet after KUBELET_GRACE_MS.
 */
async function reclaimRun(bench: Bench, stack: Stack, tag: string): Promise<RunFigures & { fillSeconds: number }> {
  const run = `${tag}-${stack === 'quartermaster' ? 'qm' : 'kq'}-${bench.serial++}`;
  const size = 8;
  const fill = (NODES * GPUS_PER_NODE) / size;
  const borrower: Gang[] = Array.from({ length: fill }, (_, i) => ({ name: `${run}-b${i}`, namespace: gangNamespace(bench, stack, 'team-a'), team: 'team-a', pods: size }));
  const lender: Gang = { name: `${run}-lender`, namespace: gangNamespace(bench, stack, 'team-b'), team: 'team-b', pods: size };
  const watch = await watchRun(bench.cluster, run);
  try {
    const fillStart = performance.now();
    const filled = watch.bound(fill * size, (p) => !p.metadata!.name!.startsWith(lender.name));
    await pool(borrower, 16, (g) => bench.objects.create(workload('Job', g, stack, run)));
    await filled;
    const fillSeconds = round((performance.now() - fillStart) / 1000);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const auditFrom = auditOffset(bench.audit);
    const lenderBound = watch.bound(size, (p) => p.metadata!.name!.startsWith(`${lender.name}-`));
    const first = performance.now();
    await bench.objects.create(workload('Job', lender, stack, run));
    const last = performance.now();
    const figures = { ...runFigures(bench, stack, { first, last, done: await lenderBound }, auditFrom, size), fillSeconds };
    log(`${run}: reclaim ${figures.seconds} s (cluster filled in ${fillSeconds} s), load ${figures.load[0]}`);
    return figures;
  } finally {
    await watch.stop();
    await cleanUpRun(bench, stack, 'Job', [...borrower, lender], run);
  }
}

/** The fake kubelet: removes a terminating pod of the bench KUBELET_GRACE_MS after its deletion was asked. */
async function startFakeKubelet(cluster: KubeCluster, core: CoreV1Api) {
  const pending = new Set<string>();
  const see = (pod: V1Pod): void => {
    if (!pod.metadata?.deletionTimestamp) return;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (pending.has(key)) return;
    pending.add(key);
    setTimeout(() => {
      core
        .deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, gracePeriodSeconds: 0 })
        .catch(() => undefined)
        .finally(() => pending.delete(key));
    }, KUBELET_GRACE_MS);
  };
  return cluster.watchPods({ onAdd: see, onUpdate: see }, { allNamespaces: true, labelSelector: RUN_LABEL });
}

async function seedQuartermaster(qm: QmService): Promise<void> {
  await qm.ok('PUT', '/v1/cohorts/research', { description: 'bench:k8s:kueue' });
  await qm.ok('PUT', '/v1/flavors/h100', { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': PRODUCT }, memoryGiB: 80, relativeSpeed: 1, costPerHour: 4 });
  for (const team of TEAMS) {
    await qm.ok('PUT', `/v1/teams/${team}`, { cohort: 'research', preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, namespaces: [qm.namespace] });
    await qm.ok('PUT', `/v1/teams/${team}/quotas/h100`, { nominal: NOMINAL, borrowingLimit: null, lendingLimit: null });
  }
  for (;;) {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: unknown[] }).items;
    if (nodes.length >= NODES) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function pair(qm: RunFigures, kueue: RunFigures): Record<string, unknown> {
  return { quartermaster: qm, kueue, ratioKueueOverQuartermaster: round(kueue.seconds / qm.seconds) };
}

async function main(): Promise<void> {
  execFileSync('bash', [join(root, 'test/k8s/controlplane/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  log('building Kueue (cached)');
  const kueueDir = await buildKueue();
  const dir = execFileSync('bash', [join(root, 'test/k8s/controlplane/start.sh'), '--watch-pid', String(process.pid)], { encoding: 'utf8' }).trim().split('\n').pop()!;
  process.env.KUBECONFIG = join(dir, 'kubeconfig');
  process.env.QM_K8S_DIR = dir;
  process.env.QM_K8S_BIN = join(process.env.QM_K8S_CACHE ?? join(homedir(), '.cache/quartermaster/k8s-v1.34.4'), 'bin');
  process.env.QM_HELM = execFileSync('bash', [join(root, 'test/k8s/controlplane/build-helm.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const audit = AUDIT ? enableAudit(dir) : null;
    const kc = new KubeConfig();
    kc.loadFromFile(process.env.KUBECONFIG);
    const core = kc.makeApiClient(CoreV1Api);
    const cluster = new KubeCluster(kc);
    log(`creating ${NODES} nodes of ${GPUS_PER_NODE} GPUs; teams' nominal quota ${NOMINAL} GPUs each`);
    const names = Array.from({ length: NODES }, (_, i) => `kq-node-${String(i).padStart(4, '0')}`);
    await pool(names, 32, (name) => core.createNode({ body: fakeNode(name, { labels: { 'nvidia.com/gpu.product': PRODUCT }, extended: { 'nvidia.com/gpu': String(GPUS_PER_NODE) } }) }));

    log('starting kube-controller-manager and the JobSet controller');
    const controllers = await startControllers(['jobset']);
    stops.push(() => controllers.stop());
    const kubelet = await startFakeKubelet(cluster, core);
    stops.push(() => kubelet.stop());

    log(`starting kube-scheduler (client QPS ${KS_QPS}, burst ${KS_QPS * 2})`);
    const scheduler = await startKubeScheduler('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: default-scheduler\n', (config) => {
      config.clientConnection = { ...(config.clientConnection as object), qps: KS_QPS, burst: KS_QPS * 2 };
    });
    stops.push(() => scheduler.stop());

    await installKueueCrds(kc, kueueDir);
    const kueueNamespaces = TEAMS.map((t) => `kq-${t}`);
    for (const namespace of [...kueueNamespaces, 'kueue-system']) {
      await core.createNamespace({ body: { metadata: { name: namespace, labels: namespace === 'kueue-system' ? {} : { [KUEUE_NAMESPACE_LABEL]: 'true' } } } });
    }

    log('starting Quartermaster');
    const qm = await startQmService(kc, 'bench-kq', QM_ENV, { h100Product: PRODUCT, a100Product: 'BENCH-KQ-NONE' });
    stops.push(() => qm.close());
    await seedQuartermaster(qm);
    const sa = await core.listNamespacedServiceAccount({ namespace: qm.namespace });
    const qmUser = sa.items[0] ? `system:serviceaccount:${qm.namespace}:${sa.items[0].metadata!.name}` : null;

    const bench: Bench = { kc, core, objects: KubernetesObjectApi.makeApiClient(kc), cluster, qm, qmUser, kueueNamespaces, audit, serial: 0 };
    let queuesMade = false;
    for (let rep = 1; rep <= REPS; rep++) {
      for (const mode of KUEUE_MODES) {
        const qps = mode === 'stock' ? null : KUEUE_QPS;
        log(`rep ${rep}: starting Kueue (${mode}${qps === null ? ', QPS 50 / burst 100' : `, QPS ${qps} / burst ${qps * 2}`})`);
        const kueue: RunningKueue = await startKueue(kc, kueueDir, dir, qps, `${rep}-${mode}`);
        try {
          if (!queuesMade) {
            await createKueueQueues(kc, { flavor: 'h100', nodeLabels: { 'nvidia.com/gpu.product': PRODUCT }, cohort: 'research', teams: TEAMS.map((name, i) => ({ name, namespace: kueueNamespaces[i]! })), nominal: NOMINAL });
            queuesMade = true;
          }
          const common = { rep, kueueMode: mode, kueueQps: qps ?? 50, kubeSchedulerQps: KS_QPS, nodes: NODES, gpusPerNode: GPUS_PER_NODE, nominalPerTeam: NOMINAL };
          if (SCENARIOS.has('bind')) {
            for (const shape of SHAPES) {
              const [k, n] = shape.split('-');
              const kind: Kind = k === 'jobset' ? 'JobSet' : 'Job';
              const size = Number(n);
              const tag = `${k}${size}-r${rep}${mode[0]}`;
              try {
                const ours = await bindRun(bench, 'quartermaster', kind, size, tag);
                const theirs = await bindRun(bench, 'kueue', kind, size, tag);
                process.stdout.write(`${JSON.stringify({ scenario: 'bind', workload: kind, podsPerGang: size, gangs: Math.round(BIND_PODS / size), pods: Math.round(BIND_PODS / size) * size, ...common, ...pair(ours, theirs) })}\n`);
              } catch (error) {
                log(`${tag} failed: ${error instanceof Error ? error.message : String(error)}`);
                process.stdout.write(`${JSON.stringify({ scenario: 'bind', workload: kind, podsPerGang: size, ...common, error: error instanceof Error ? error.message : String(error) })}\n`);
              }
            }
          }
          if (SCENARIOS.has('reclaim')) {
            const tag = `rc-r${rep}${mode[0]}`;
            try {
              const ours = await reclaimRun(bench, 'quartermaster', tag);
              const theirs = await reclaimRun(bench, 'kueue', tag);
              process.stdout.write(`${JSON.stringify({ scenario: 'reclaim', workload: 'Job', podsPerGang: 8, borrowerGangs: (NODES * GPUS_PER_NODE) / 8, kubeletGraceMs: KUBELET_GRACE_MS, ...common, ...pair(ours, theirs) })}\n`);
            } catch (error) {
              log(`${tag} failed: ${error instanceof Error ? error.message : String(error)}`);
              process.stdout.write(`${JSON.stringify({ scenario: 'reclaim', ...common, error: error instanceof Error ? error.message : String(error) })}\n`);
            }
          }
        } finally {
          await kueue.stop();
        }
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => log(`stop: ${String(error)}`));
    execFileSync('bash', [join(root, 'test/k8s/controlplane/stop.sh'), dir, ...(KEEP ? ['--keep'] : [])], { stdio: 'ignore' });
    if (KEEP) log(`control plane directory kept: ${dir}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:k8s:kueue failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
