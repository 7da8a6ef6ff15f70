// Starts real upstream workload controllers against the k8s suite's kube-apiserver: kube-controller-manager
// (Job, StatefulSet, garbage-collector and EndpointSlice controllers), JobSet, LeaderWorkerSet, the KubeRay operator and the
// Kubeflow Trainer. Binaries and the manifests of the same module versions come from build.sh (cached in
// ~/.cache/quartermaster/controllers); CRDs are applied server-side, webhooks get a self-signed certificate
// for 127.0.0.1 and their configurations point at the controller's port (see /work/shared/CONTROLLERS.md).
// Each controller gets free ports and a log in the control plane's directory; stop() stops them and removes
// the webhook configurations they registered. A test file starts only what it needs (startControllers).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { testKubeConfig } from '../support/cluster.js';

const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

export type ControllerName = 'kube-controller-manager' | 'jobset' | 'lws' | 'kuberay' | 'trainer';

/** What each controller needs first: the Trainer's pods come through JobSet, every Job's through kube-controller-manager. */
const NEEDS: Record<ControllerName, ControllerName[]> = {
  'kube-controller-manager': [],
  jobset: ['kube-controller-manager'],
  lws: ['kube-controller-manager'],
  kuberay: ['kube-controller-manager'],
  trainer: ['kube-controller-manager', 'jobset'],
};
const ORDER: ControllerName[] = ['kube-controller-manager', 'jobset', 'lws', 'kuberay', 'trainer'];

export interface RunningControllers {
  /** The directory with each controller's log (`<name>.log`), config and certificates. */
  dir: string;
  names: ControllerName[];
  log(name: ControllerName): string;
  /** The manifests copied from the controller's module (CRDs, webhooks, samples). */
  manifests(name: ControllerName, ...path: string[]): string;
  stop(): Promise<void>;
}

/** Builds (cached) the named controllers, returning name → cache directory (bin/NAME, manifests/). */
export async function buildControllers(names: readonly ControllerName[]): Promise<Map<ControllerName, string>> {
  const started = Date.now();
  const { stdout } = await run('bash', [join(here, 'build.sh'), ...names], { maxBuffer: 1 << 20 }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`test/k8s/controllers/build.sh ${names.join(' ')} failed: ${error.stderr ?? error.message}`);
  });
  const dirs = new Map<ControllerName, string>();
  for (const line of stdout.trim().split('\n')) {
    const [name, dir] = line.split(' ');
    if (name && dir) dirs.set(name as ControllerName, dir);
  }
  if (Date.now() - started > 10_000) process.stderr.write(`controllers built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return dirs;
}

export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  const ports = await Promise.all(servers.map((s) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)))));
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export function yamlObjects(path: string): KubernetesObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => doc.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => !!o && typeof o === 'object' && !!o.kind);
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .map((f) => join(dir, f));
}

/** RFC 6902 operations as kustomize's patches use them (add, replace, remove). */
function applyJsonPatch(target: unknown, ops: { op: string; path: string; value?: unknown }[]): void {
  for (const { op, path, value } of ops) {
    const parts = path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent = target as Record<string, unknown> | unknown[];
    for (const part of parts) parent = (Array.isArray(parent) ? parent[Number(part)] : parent[part]) as Record<string, unknown> | unknown[];
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (op === 'add') parent.splice(index, 0, value);
      else if (op === 'replace') parent[index] = value;
      else if (op === 'remove') parent.splice(index, 1);
      else throw new Error(`unsupported JSON patch op ${op}`);
    } else if (op === 'add' || op === 'replace') parent[last] = value;
    else if (op === 'remove') delete parent[last];
    else throw new Error(`unsupported JSON patch op ${op}`);
  }
}

interface WebhookConfiguration extends KubernetesObject {
  webhooks?: { name: string; clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }[];
}

/**
 * The webhook configurations of a kubebuilder project as `kubectl kustomize DIR` renders them (manifests.yaml
 * with the kustomization's JSON patches, e.g. JobSet's and LWS's objectSelector on the pod webhooks), renamed
 * `qm-test-<controller>-…` and pointed at https://127.0.0.1:PORT with the given CA.
 */
export function renderWebhooks(dir: string, controller: string, port: number, caPem: string): WebhookConfiguration[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    patches?: { path: string; target?: { kind?: string; name?: string } }[];
  };
  const objects = yamlObjects(join(dir, 'manifests.yaml')) as WebhookConfiguration[];
  for (const patch of kustomization.patches ?? []) {
    const ops = parse(readFileSync(join(dir, patch.path), 'utf8')) as { op: string; path: string; value?: unknown }[];
    for (const object of objects) {
      if (patch.target?.kind && object.kind !== patch.target.kind) continue;
      if (patch.target?.name && object.metadata?.name !== patch.target.name) continue;
      applyJsonPatch(object, ops);
    }
  }
  const caBundle = Buffer.from(caPem).toString('base64');
  for (const object of objects) {
    object.metadata = { name: `qm-test-${controller}-${object.metadata?.name ?? 'webhooks'}` };
    for (const webhook of object.webhooks ?? []) {
      const path = webhook.clientConfig.service?.path ?? '/';
      webhook.clientConfig = { url: `https://127.0.0.1:${port}${path}`, caBundle };
    }
  }
  return objects;
}

/** A self-signed serving certificate for 127.0.0.1 (tls.crt, tls.key in dir). */
export async function selfSignedCert(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt'),
  ]);
  return readFileSync(join(dir, 'tls.crt'), 'utf8');
}

/** Cluster-scoped kinds the controllers' manifests hold, by kind: API path prefix and resource. */
const CLUSTER_KINDS: Record<string, string> = {
  CustomResourceDefinition: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  ClusterTrainingRuntime: '/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes',
};

/**
 * Server-side apply of manifests as they are (raw JSON: client-node's typed serializer would drop fields it
 * has no camel-case name for, such as a CRD schema's `x-kubernetes-list-type`).
 */
export async function applyServerSide(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const server = kc.getCurrentCluster()!.server;
  for (const object of objects) {
    const base = CLUSTER_KINDS[object.kind!];
    if (!base) throw new Error(`applyServerSide: no API path known for kind ${object.kind}`);
    const url = new URL(`${server}${base}/${object.metadata!.name}?fieldManager=quartermaster-tests&force=true`);
    const options: https.RequestOptions = { method: 'PATCH', hostname: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers: { 'content-type': 'application/apply-patch+yaml' } };
    await kc.applyToHTTPSOptions(options);
    await new Promise<void>((resolve, reject) => {
      const req = https.request(options, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve() : reject(new Error(`apply ${object.kind} ${object.metadata!.name}: HTTP ${res.statusCode}: ${body.slice(0, 1000)}`))));
      });
      req.on('error', reject);
      req.end(JSON.stringify(object));
    });
  }
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (!alive()) throw new Error(`${what}: the process exited`);
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** CRDs from these files, applied server-side, each established. */
export async function applyCrds(kc: KubeConfig, files: string[]): Promise<void> {
  const crds = files.flatMap(yamlObjects);
  await applyServerSide(kc, crds);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds) {
    await until(
      `CRD ${crd.metadata!.name} established`,
      async () => {
        const got = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
        return (got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
      },
      30_000,
    );
  }
}

interface Process {
  name: ControllerName;
  child: ChildProcess;
  exited: boolean;
  webhooks: WebhookConfiguration[];
}

/**
 * Starts the named controllers (and those they need: kube-controller-manager for every Job or StatefulSet,
 * JobSet for the Trainer) against KUBECONFIG; resolves once each is ready. The caller must stop() them.
 */
export async function startControllers(wanted: readonly ControllerName[]): Promise<RunningControllers> {
  const names = ORDER.filter((n) => wanted.includes(n) || wanted.some((w) => NEEDS[w].includes(n)));
  const built = await buildControllers(names);
  const kubeconfigPath = process.env.KUBECONFIG!;
  const kc = testKubeConfig();
  const base = process.env.QM_K8S_DIR ?? dirname(kubeconfigPath);
  const dir = join(base, `controllers-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const processes: Process[] = [];
  const log = (name: ControllerName): string => join(dir, `${name}.log`);
  const manifests = (name: ControllerName, ...path: string[]): string => join(built.get(name)!, 'manifests', ...path);
  const binary = (name: ControllerName): string => join(built.get(name)!, 'bin', name);

  const spawnWatched = (name: ControllerName, args: string[], env: Record<string, string> = {}): Process => {
    const out = createWriteStream(log(name), { flags: 'a' });
    const child = spawn('bash', [join(here, 'run-watched.sh'), String(process.pid), '--', binary(name), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    const proc: Process = { name, child, exited: false, webhooks: [] };
    child.on('exit', () => {
      proc.exited = true;
    });
    processes.push(proc);
    return proc;
  };
  const ready = (proc: Process, url: string): Promise<void> =>
    until(`${proc.name} ready (${url}; log ${log(proc.name)})`, async () => (await fetch(url)).ok, 90_000, () => !proc.exited);

  const stop = async (): Promise<void> => {
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    for (const proc of processes) {
      for (const webhook of proc.webhooks) {
        const name = webhook.metadata!.name!;
        if (webhook.kind === 'MutatingWebhookConfiguration') await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
        else await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
      }
    }
    await Promise.all(
      processes.map(
        (proc) =>
          new Promise<void>((resolve) => {
            if (proc.exited) return resolve();
            proc.child.once('exit', () => resolve());
            try {
              process.kill(-proc.child.pid!, 'SIGTERM');
            } catch {
              resolve();
            }
            setTimeout(() => {
              try {
                process.kill(-proc.child.pid!, 'SIGKILL');
              } catch {
                // gone already
              }
            }, 15_000).unref();
          }),
      ),
    );
  };

  try {
    // CRDs first (the Trainer's need JobSet's), so that kube-controller-manager's garbage collector knows them.
    const crdFiles: string[] = [];
    if (names.includes('jobset')) crdFiles.push(...yamlFiles(manifests('jobset', 'config/components/crd/bases')));
    if (names.includes('lws')) crdFiles.push(...yamlFiles(manifests('lws', 'config/crd/bases')));
    if (names.includes('kuberay')) crdFiles.push(...yamlFiles(manifests('kuberay', 'config/crd/bases')));
    if (names.includes('trainer')) crdFiles.push(...yamlFiles(manifests('trainer', 'manifests/base/crds')));
    await applyCrds(kc, crdFiles);

    for (const name of names) {
      const [healthPort, webhookPort] = await freePorts(2);
      const health = `http://127.0.0.1:${healthPort}`;
      switch (name) {
        case 'kube-controller-manager': {
          const proc = spawnWatched(name, [
            `--kubeconfig=${kubeconfigPath}`,
            '--leader-elect=false',
            `--secure-port=${healthPort}`,
            '--bind-address=127.0.0.1',
            `--authentication-kubeconfig=${kubeconfigPath}`,
            `--authorization-kubeconfig=${kubeconfigPath}`,
            `--cert-dir=${join(dir, 'kube-controller-manager-certs')}`,
            '--controllers=job-controller,statefulset-controller,garbage-collector-controller,ttl-after-finished-controller,endpointslice-controller',
            '--concurrent-job-syncs=20',
            // Its client's stock 20 QPS would make pod creation, not scheduling, what workload tests and bench:k8s wait for.
            '--kube-api-qps=200',
            '--kube-api-burst=400',
            '--v=1',
          ]);
          await until(`kube-controller-manager healthy (log ${log(name)})`, () => insecureHealthz(healthPort!), 90_000, () => !proc.exited);
          break;
        }
        case 'jobset':
        case 'lws': {
          const certDir = join(dir, `${name}-certs`);
          const ca = await selfSignedCert(certDir);
          const config = join(dir, `${name}-config.yaml`);
          const group = name === 'jobset' ? 'config.jobset.x-k8s.io/v1alpha1' : 'config.lws.x-k8s.io/v1alpha1';
          writeFileSync(
            config,
            [
              `apiVersion: ${group}`,
              'kind: Configuration',
              'leaderElection: {leaderElect: false}',
              'internalCertManagement: {enable: false}',
              "metrics: {bindAddress: '0'}",
              `health: {healthProbeBindAddress: '127.0.0.1:${healthPort}'}`,
              `webhook: {host: 127.0.0.1, port: ${webhookPort}, certDir: ${certDir}}`,
              '',
            ].join('\n'),
          );
          const proc = spawnWatched(name, [`--config=${config}`, '--leader-elect=false', '--zap-log-level=info']);
          const webhookDir = name === 'jobset' ? manifests(name, 'config/components/webhook') : manifests(name, 'config/webhook');
          proc.webhooks = renderWebhooks(webhookDir, name, webhookPort!, ca);
          await ready(proc, `${health}/readyz`);
          await applyServerSide(kc, proc.webhooks);
          break;
        }
        case 'kuberay': {
          const proc = spawnWatched(name, ['--enable-leader-election=false', '--metrics-addr=0', `--health-probe-bind-address=127.0.0.1:${healthPort}`, '--log-stdout-encoder=console']);
          await ready(proc, `${health}/readyz`);
          break;
        }
        case 'trainer': {
          await trainerPrerequisites(kc);
          // The Trainer's cert rotator only waits for a certificate file in this hard-coded directory (a kubelet
          // would mount its Secret there); its validation webhooks stay unregistered, so any certificate does.
          const certs = '/tmp/k8s-webhook-server/serving-certs';
          if (!existsSync(join(certs, 'tls.crt'))) {
            const tmp = join(dir, 'trainer-certs');
            await selfSignedCert(tmp);
            mkdirSync(certs, { recursive: true });
            for (const f of ['tls.key', 'tls.crt']) {
              writeFileSync(`${join(certs, f)}.${process.pid}`, readFileSync(join(tmp, f)));
              renameSync(`${join(certs, f)}.${process.pid}`, join(certs, f));
            }
          }
          const proc = spawnWatched(name, [`--health-probe-bind-address=127.0.0.1:${healthPort}`, `--webhook-server-port=${webhookPort}`, '--metrics-bind-address=0', '--leader-elect=false']);
          await ready(proc, `${health}/readyz`);
          await applyServerSide(kc, yamlFiles(manifests('trainer', 'manifests/base/runtimes')).flatMap(yamlObjects));
          break;
        }
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { dir, names, log, manifests, stop };
}

/** kube-controller-manager serves /healthz over TLS with a self-signed certificate: ask curl, which can skip the check. */
async function insecureHealthz(port: number): Promise<boolean> {
  const { stdout } = await run('curl', ['-ks', '-o', '/dev/null', '-w', '%{http_code}', `https://127.0.0.1:${port}/healthz`]);
  return stdout.trim() === '200';
}

/** What the Trainer's mandatory cert rotator expects to find: its namespace, an (empty) Secret, a validating webhook configuration. */
async function trainerPrerequisites(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const exists = (error: unknown): void => {
    if ((error as { code?: number }).code !== 409) throw error;
  };
  await core.createNamespace({ body: { metadata: { name: 'kubeflow-system' } } }).catch(exists);
  await core.createNamespacedSecret({ namespace: 'kubeflow-system', body: { metadata: { name: 'kubeflow-trainer-webhook-cert' } } }).catch(exists);
  await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: 'validator.trainer.kubeflow.org' }, webhooks: [] } }).catch(exists);
}
