// Kueue v0.17 (sigs.k8s.io/kueue, built by test/k8s/controllers/build-kueue.sh) on the bench's control plane:
// its CRDs, its process (own free ports, a self-signed certificate for 127.0.0.1, the hard-coded cert paths it
// reads even with internal cert management off), its job and JobSet webhooks and its own objects' webhooks
// pointed at that process, and the queues — a ResourceFlavor, a ClusterQueue per team in one cohort
// (reclaimWithinCohort: Any) and a LocalQueue in each team's namespace. Recipe: /work/shared/CONTROLLERS.md,
// "Kueue v0.17.0". Benchmark only (bench:k8s:kueue).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync, copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AdmissionregistrationV1Api, CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { applyCrds, applyServerSide, freePorts, selfSignedCert, until, yamlObjects } from '../../test/k8s/controllers/controllers.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
export const KUEUE_GROUP = 'kueue.x-k8s.io';
export const KUEUE_VERSION = 'v1beta2';
/** Namespaces whose Jobs and JobSets Kueue's webhooks see carry this label (Quartermaster's do not). */
export const KUEUE_NAMESPACE_LABEL = 'qm-bench/kueue';
export const QUEUE_NAME_LABEL = 'kueue.x-k8s.io/queue-name';

/** Builds Kueue (cached): the directory with bin/kueue and manifests/. */
export async function buildKueue(): Promise<string> {
  const { stdout } = await run('bash', [join(root, 'test/k8s/controllers/build-kueue.sh')], { maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').pop()!.split(' ')[1]!;
}

/** Kueue's CRDs, applied server-side, established. */
export async function installKueueCrds(kc: KubeConfig, kueueDir: string): Promise<void> {
  const dir = join(kueueDir, 'manifests/config/components/crd/bases');
  await applyCrds(kc, readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f)));
}

interface Webhook {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  namespaceSelector?: unknown;
}
type WebhookConfiguration = KubernetesObject & { webhooks?: Webhook[] };

/**
 * Kueue's webhook configurations (config/components/webhook/manifests.yaml) for what the bench uses — batch
 * Jobs, JobSets and Kueue's own kinds — pointed at https://127.0.0.1:PORT. The Job and JobSet webhooks only see
 * namespaces labelled KUEUE_NAMESPACE_LABEL, so Quartermaster's creates do not pass through Kueue.
 */
function kueueWebhooks(kueueDir: string, port: number, caPem: string): WebhookConfiguration[] {
  const objects = yamlObjects(join(kueueDir, 'manifests/config/components/webhook/manifests.yaml')) as WebhookConfiguration[];
  const caBundle = Buffer.from(caPem).toString('base64');
  const out: WebhookConfiguration[] = [];
  for (const object of objects) {
    if (object.kind !== 'MutatingWebhookConfiguration' && object.kind !== 'ValidatingWebhookConfiguration') continue;
    const webhooks = (object.webhooks ?? []).filter((w) => /-(batch-v1-job|jobset-x-k8s-io-v1alpha2-jobset|kueue-x-k8s-io-v1beta2-[a-z]+)$/.test(w.clientConfig.service?.path ?? ''));
    for (const webhook of webhooks) {
      const path = webhook.clientConfig.service!.path!;
      webhook.clientConfig = { url: `https://127.0.0.1:${port}${path}`, caBundle };
      if (!path.includes('kueue-x-k8s-io')) webhook.namespaceSelector = { matchLabels: { [KUEUE_NAMESPACE_LABEL]: 'true' } };
    }
    out.push({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: `qm-bench-kueue-${object.metadata!.name}` }, webhooks });
  }
  return out;
}

export interface RunningKueue {
  log: string;
  stop(): Promise<void>;
}

/**
 * Starts Kueue with client QPS/burst `qps` (null: its stock 50/100), the batch/job and JobSet integrations, no
 * leader election, its webhooks registered; resolves once ready and its webhooks answer.
 */
export async function startKueue(kc: KubeConfig, kueueDir: string, workDir: string, qps: number | null, label: string): Promise<RunningKueue> {
  const [healthPort, webhookPort, visibilityPort] = await freePorts(3);
  const dir = join(workDir, `kueue-${label}`);
  const certDir = join(dir, 'certs');
  await selfSignedCert(certDir);
  // Paths Kueue reads whatever the configuration says (in a cluster, mounted Secrets).
  for (const target of ['/etc/kueue/metrics/certs', '/visibility']) {
    mkdirSync(target, { recursive: true });
    for (const f of ['tls.crt', 'tls.key']) copyFileSync(join(certDir, f), join(target, f));
  }
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: config.kueue.x-k8s.io/v1beta2',
      'kind: Configuration',
      'namespace: kueue-system',
      'leaderElection: {leaderElect: false}',
      'internalCertManagement: {enable: false}',
      "metrics: {bindAddress: '0'}",
      `health: {healthProbeBindAddress: '127.0.0.1:${healthPort}'}`,
      `webhook: {host: 127.0.0.1, port: ${webhookPort}, certDir: ${certDir}}`,
      ...(qps === null ? [] : [`clientConnection: {qps: ${qps}, burst: ${qps * 2}}`]),
      'integrations:',
      '  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]',
      '',
    ].join('\n'),
  );
  const log = join(dir, 'kueue.log');
  const out = createWriteStream(log, { flags: 'a' });
  const child: ChildProcess = spawn(
    'bash',
    [join(root, 'test/k8s/controllers/run-watched.sh'), String(process.pid), '--', join(kueueDir, 'bin/kueue'), `--config=${config}`, `--visibility-server-port=${visibilityPort}`, '--feature-gates=VisibilityOnDemand=false', '--zap-log-level=info'],
    { env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const webhooks = kueueWebhooks(kueueDir, webhookPort!, readFileSync(join(certDir, 'tls.crt'), 'utf8'));
  const stop = async (): Promise<void> => {
    for (const w of webhooks) {
      const name = w.metadata!.name!;
      if (w.kind === 'MutatingWebhookConfiguration') await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      else await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
    }
    if (!exited) {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // gone
      }
      const kill = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }, 15_000);
      await exit;
      clearTimeout(kill);
    }
  };
  try {
    await until(`kueue ready (log ${log})`, async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, 120_000, () => !exited);
    await applyServerSide(kc, webhooks);
  } catch (error) {
    await stop();
    throw error;
  }
  return { log, stop };
}

/**
 * The queues: ResourceFlavor `flavor` (nodes labelled `nodeLabels`), a ClusterQueue per team in cohort
 * `cohort` with `nominal` GPUs, unlimited borrowing, reclaimWithinCohort: Any, and a LocalQueue `lq` in each
 * team's namespace. Resolves once every ClusterQueue is Active.
 */
export async function createKueueQueues(
  kc: KubeConfig,
  { flavor, nodeLabels, cohort, teams, nominal }: { flavor: string; nodeLabels: Record<string, string>; cohort: string; teams: { name: string; namespace: string }[]; nominal: number },
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const exists = (error: unknown): void => {
    if ((error as { code?: number }).code !== 409) throw error;
  };
  await custom
    .createClusterCustomObject({ group: KUEUE_GROUP, version: KUEUE_VERSION, plural: 'resourceflavors', body: { apiVersion: `${KUEUE_GROUP}/${KUEUE_VERSION}`, kind: 'ResourceFlavor', metadata: { name: flavor }, spec: { nodeLabels } } })
    .catch(exists);
  for (const team of teams) {
    await custom
      .createClusterCustomObject({
        group: KUEUE_GROUP,
        version: KUEUE_VERSION,
        plural: 'clusterqueues',
        body: {
          apiVersion: `${KUEUE_GROUP}/${KUEUE_VERSION}`,
          kind: 'ClusterQueue',
          metadata: { name: team.name },
          spec: {
            cohortName: cohort,
            namespaceSelector: {},
            preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
            resourceGroups: [{ coveredResources: ['nvidia.com/gpu'], flavors: [{ name: flavor, resources: [{ name: 'nvidia.com/gpu', nominalQuota: nominal }] }] }],
          },
        },
      })
      .catch(exists);
    await custom
      .createNamespacedCustomObject({
        group: KUEUE_GROUP,
        version: KUEUE_VERSION,
        namespace: team.namespace,
        plural: 'localqueues',
        body: { apiVersion: `${KUEUE_GROUP}/${KUEUE_VERSION}`, kind: 'LocalQueue', metadata: { name: 'lq', namespace: team.namespace }, spec: { clusterQueue: team.name } },
      })
      .catch(exists);
  }
  for (const team of teams) {
    await until(
      `ClusterQueue ${team.name} active`,
      async () => {
        const cq = (await custom.getClusterCustomObject({ group: KUEUE_GROUP, version: KUEUE_VERSION, plural: 'clusterqueues', name: team.name })) as { status?: { conditions?: { type: string; status: string }[] } };
        return (cq.status?.conditions ?? []).some((c) => c.type === 'Active' && c.status === 'True');
      },
      60_000,
    );
  }
}

/** Kueue Workloads left in the namespaces. */
export async function kueueWorkloads(kc: KubeConfig, namespaces: readonly string[]): Promise<number> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  let n = 0;
  for (const namespace of namespaces) {
    const list = (await custom.listNamespacedCustomObject({ group: KUEUE_GROUP, version: KUEUE_VERSION, namespace, plural: 'workloads' })) as { items: unknown[] };
    n += list.items.length;
  }
  return n;
}
