// deploy/: the Helm chart renders (real helm, built from the Go module proxy), its objects are accepted by
// the real kube-apiserver, its ClusterRole grants exactly what KubeCluster needs (checked by acting as the
// chart's ServiceAccount), and deploy/kube-scheduler/config.yaml is accepted by a real kube-scheduler that
// then sends accelerator pods — and only those — to the extender's filter/prioritize/bind verbs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_MASTER_PORT, KubeApiError, KubeCluster, deleteRendezvousService, ensureRendezvousService, podManifestForReplica, rendezvousServiceName } from '#kube';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';
import { readRepoFile, startKubeScheduler } from './support/kube-scheduler.js';
import { request as httpsRequest } from 'node:https';
import { createLogger } from '#common';
import { startExtenderTlsServer } from '../../apps/scheduler/src/extender/extender-tls-server.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('qm-deploy');
const release = uniqueName('qm');
const gpuNode = uniqueName('deploy-gpu');
const gpuNode2 = uniqueName('deploy-gpu');
const cpuNode = uniqueName('deploy-cpu');

interface Rendered extends KubernetesObject {
  spec?: Record<string, unknown>;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  data?: Record<string, string>;
}

function helmTemplate(releaseName = release): Rendered[] {
  const helm = process.env.QM_HELM;
  if (!helm) throw new Error('QM_HELM is not set: run through the k8s Jest project');
  const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
  const result = spawnSync(helm, ['template', releaseName, chart, '--namespace', namespace, '--kube-version', 'v1.34.4'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  const documents = parseAllDocuments(result.stdout);
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]!.message}`);
  }
  return documents.map((document) => document.toJS() as Rendered).filter((object) => object !== null);
}

/** KubeConfig that acts as `system:serviceaccount:<ns>:<name>` (the admin may impersonate). */
function asServiceAccount(name: string): KubeConfig {
  const impersonating = new KubeConfig();
  impersonating.loadFromOptions({
    clusters: kc.clusters,
    users: kc.users.map((user) => ({ ...user, impersonateUser: `system:serviceaccount:${namespace}:${name}` })),
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return impersonating;
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof KubeApiError) return error.status ?? -1;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw error;
  }
}

describe('deploy/: Helm chart and kube-scheduler configuration', () => {
  let objects: Rendered[];

  beforeAll(async () => {
    objects = helmTemplate();
    await createNamespace(core, namespace);
    const labels = { 'qm-test-release': release };
    await core.createNode({ body: fakeNode(gpuNode, { labels, extended: { 'nvidia.com/gpu': '8' } }) });
    await core.createNode({ body: fakeNode(gpuNode2, { labels, extended: { 'nvidia.com/gpu': '8' } }) });
    await core.createNode({ body: fakeNode(cpuNode, { labels }) });
  }, 60_000);

  afterAll(async () => {
    const generic = KubernetesObjectApi.makeApiClient(kc);
    for (const object of objects ?? []) {
      if (object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding') await generic.delete(object).catch(() => undefined);
    }
    await cleanUp(core, namespace, [gpuNode, gpuNode2, cpuNode]);
  }, 60_000);

  it('renders the three processes, a Service, ConfigMap, ServiceAccounts, RBAC and NetworkPolicies', () => {
    const summary = objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort();
    const base = `${release}-quartermaster`;
    expect(summary).toEqual(
      [
        `ClusterRole/${base}`,
        `ClusterRoleBinding/${base}`,
        `ConfigMap/${base}`,
        `Deployment/${base}-api`,
        `Deployment/${base}-scheduler`,
        `Deployment/${base}-worker`,
        `Service/${base}-api`,
        `Service/${base}-scheduler`,
        `ServiceAccount/${base}`,
        `ServiceAccount/${base}-api`,
        `NetworkPolicy/${base}-api`,
        `NetworkPolicy/${base}-scheduler`,
        `NetworkPolicy/${base}-worker`,
        `Secret/${base}-metrics`,
      ].sort(),
    );
    const deployment = (component: string): Record<string, unknown> =>
      objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === `${base}-${component}`)!.spec!;
    expect(deployment('scheduler').replicas).toBe(2);
    for (const component of ['api', 'scheduler', 'worker']) {
      const container = (deployment(component) as { template: { spec: { containers: { args: string[] }[] } } }).template.spec.containers[0]!;
      expect(container.args).toEqual([component]);
    }
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    expect(configMap.data?.kubeconfig).toContain('tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token'); // see the next tests
    expect(configMap.data?.QM_KUBE_LEADER_LEASE).toBe(`${base}-scheduler`);
    expect(configMap.data?.QM_KUBE_LEADER_LEASE_NAMESPACE).toBe(namespace); // the release's, not the jobs' pods'
    // Its own namespace, which no team's pods may use; team namespaces are not created unless asked.
    expect(configMap.data?.QM_KUBE_OWN_NAMESPACE).toBe(namespace);
    expect(configMap.data?.QM_KUBE_CREATE_NAMESPACES).toBeUndefined();
    expect(configMap.data?.QM_KUBE_NAMESPACE_POD_SECURITY).toBe('restricted');
    expect(configMap.data?.QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS).toBe('allow');
    // The processes listen on 127.0.0.1 unless told: the chart tells them every interface, or the probes (to the pod IP) fail.
    expect(configMap.data?.HOST).toBe('0.0.0.0');
  });

  it('hardens every pod: read-only root filesystem, RuntimeDefault seccomp, no privilege escalation; the API has no Kubernetes identity', () => {
    const base = `${release}-quartermaster`;
    type PodSpec = {
      serviceAccountName: string;
      automountServiceAccountToken?: boolean;
      securityContext: Record<string, unknown>;
      containers: { securityContext: Record<string, unknown>; volumeMounts: { mountPath: string }[] }[];
    };
    const podSpec = (component: string): PodSpec =>
      (objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === `${base}-${component}`)!.spec as { template: { spec: PodSpec } }).template.spec;
    for (const component of ['api', 'scheduler', 'worker']) {
      const spec = podSpec(component);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(spec.containers[0]!.volumeMounts.map((m) => m.mountPath)).toContain('/tmp');
    }
    // The ClusterRole is bound to the scheduler's and worker's ServiceAccount only.
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding') as unknown as { subjects: { name: string }[] };
    expect(binding.subjects.map((s) => s.name)).toEqual([base]);
    expect(podSpec('scheduler').serviceAccountName).toBe(base);
    expect(podSpec('worker').serviceAccountName).toBe(base);
    expect(podSpec('api')).toMatchObject({ serviceAccountName: `${base}-api`, automountServiceAccountToken: false });
    expect(objects.find((o) => o.kind === 'ServiceAccount' && o.metadata?.name === `${base}-api`)).toMatchObject({ automountServiceAccountToken: false });
  });

  it('guards /metrics on every process with a generated bearer token (metrics.guard), or none when told', () => {
    const base = `${release}-quartermaster`;
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata?.name === `${base}-metrics`)!;
    // At least the 16 characters QM_METRICS_TOKEN must have (the processes refuse to start with fewer).
    expect(Buffer.from(secret.data!.token!, 'base64').toString('utf8')).toMatch(/^[A-Za-z0-9]{40}$/);
    type Env = { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
    for (const component of ['api', 'scheduler', 'worker']) {
      const container = (objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === `${base}-${component}`)!.spec as { template: { spec: { containers: { env: Env[] }[] } } }).template.spec.containers[0]!;
      expect(container.env.find((e) => e.name === 'QM_METRICS_TOKEN')?.valueFrom?.secretKeyRef).toEqual({ name: `${base}-metrics`, key: 'token' });
    }
    const helm = process.env.QM_HELM!;
    const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
    const open = spawnSync(helm, ['template', release, chart, '--namespace', namespace, '--kube-version', 'v1.34.4', '--set', 'metrics.guard=false'], { encoding: 'utf8' });
    expect(open.status).toBe(0);
    expect(open.stdout).not.toContain('QM_METRICS_TOKEN');
    expect(open.stdout).not.toContain(`${base}-metrics`);
  });

  it('grants creating namespaces, and says so to the scheduler, only with teamNamespaces.create', () => {
    const helm = process.env.QM_HELM!;
    const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
    const render = (...args: string[]): string => {
      const result = spawnSync(helm, ['template', release, chart, '--namespace', namespace, '--kube-version', 'v1.34.4', ...args], { encoding: 'utf8' });
      expect(result.status).toBe(0);
      return result.stdout;
    };
    const namespaceVerbs = (yaml: string): string[] => {
      const role = parseAllDocuments(yaml).map((d) => d.toJS() as Rendered & { rules?: { resources: string[]; verbs: string[] }[] }).find((o) => o?.kind === 'ClusterRole')!;
      return role.rules!.find((r) => r.resources.includes('namespaces'))!.verbs;
    };
    expect(namespaceVerbs(render())).toEqual(['get', 'list', 'watch']);
    const creating = render('--set', 'teamNamespaces.create=true', '--set', 'teamNamespaces.podSecurity=baseline');
    expect(namespaceVerbs(creating)).toEqual(['get', 'list', 'watch', 'create']);
    expect(creating).toContain('QM_KUBE_CREATE_NAMESPACES: "true"');
    expect(creating).toContain('QM_KUBE_NAMESPACE_POD_SECURITY: "baseline"');
  });

  it("admits only kube-scheduler to the extender's port, nobody to the worker's, everyone to the API's", () => {
    const base = `${release}-quartermaster`;
    type Policy = { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: { ports?: { port: string }[]; from?: unknown[] }[] };
    const policy = (component: string): Policy => objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata?.name === `${base}-${component}`)!.spec as unknown as Policy;
    for (const component of ['api', 'scheduler', 'worker']) {
      expect(policy(component).podSelector.matchLabels['app.kubernetes.io/component']).toBe(component);
      expect(policy(component).policyTypes).toEqual(['Ingress']);
    }
    expect(policy('api').ingress).toEqual([{ ports: [{ port: 'http' }] }]);
    expect(policy('scheduler').ingress).toEqual([
      {
        ports: [{ port: 'http' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { component: 'kube-scheduler' } } }],
      },
    ]);
    expect(policy('worker').ingress).toEqual([]);
    // A Prometheus given as metricsFrom reaches the scheduler's and the worker's /metrics.
    const helm = process.env.QM_HELM!;
    const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
    const withMetrics = spawnSync(
      helm,
      ['template', release, chart, '--namespace', namespace, '--kube-version', 'v1.34.4', '--set-json', 'networkPolicy.metricsFrom=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}]'],
      { encoding: 'utf8' },
    );
    expect(withMetrics.status).toBe(0);
    const rendered = parseAllDocuments(withMetrics.stdout).map((d) => d.toJS() as Rendered).filter((o) => o?.kind === 'NetworkPolicy');
    const worker = rendered.find((o) => o.metadata?.name === `${base}-worker`)!.spec as unknown as Policy;
    expect(worker.ingress).toEqual([{ ports: [{ port: 'http' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] }]);
    const scheduler = rendered.find((o) => o.metadata?.name === `${base}-scheduler`)!.spec as unknown as Policy;
    expect(scheduler.ingress[0]!.from).toHaveLength(2);
  });

  it("extender.tls.generate: a CA, the scheduler's certificate and kube-scheduler's client certificate that complete a mutual-TLS handshake; the extender on its own port", async () => {
    const helm = process.env.QM_HELM!;
    const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
    const result = spawnSync(helm, ['template', release, chart, '--namespace', namespace, '--kube-version', 'v1.34.4', '--set', 'extender.tls.generate=true'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    const rendered = parseAllDocuments(result.stdout).map((d) => d.toJS() as Rendered).filter((o) => o !== null);
    const base = `${release}-quartermaster`;
    const secret = rendered.find((o) => o.kind === 'Secret' && o.metadata?.name === `${base}-extender-tls`)!;
    expect(Object.keys(secret.data!).sort()).toEqual(['ca.crt', 'kube-scheduler.crt', 'kube-scheduler.key', 'tls.crt', 'tls.key']);
    // The scheduler serves it on port `extender` (8443) of its pods and Service; the NetworkPolicy admits only kube-scheduler there.
    type Container = { env: { name: string; value: string }[]; ports: { name: string; containerPort: number }[] };
    const scheduler = (rendered.find((o) => o.kind === 'Deployment' && o.metadata?.name === `${base}-scheduler`)!.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;
    expect(scheduler.ports).toContainEqual({ name: 'extender', containerPort: 8443 });
    expect(Object.fromEntries(scheduler.env.map((e) => [e.name, e.value]))).toMatchObject({
      QM_EXTENDER_TLS_PORT: '8443',
      QM_EXTENDER_TLS_CERT_FILE: '/etc/quartermaster/extender-tls/tls.crt',
      QM_EXTENDER_TLS_CLIENT_CA_FILE: '/etc/quartermaster/extender-tls/ca.crt',
    });
    const api = (rendered.find((o) => o.kind === 'Deployment' && o.metadata?.name === `${base}-api`)!.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;
    expect(api.env.map((e) => e.name)).not.toContain('QM_EXTENDER_TLS_CERT_FILE');
    const service = rendered.find((o) => o.kind === 'Service' && o.metadata?.name === `${base}-scheduler`)!.spec as { ports: { name: string; port: number }[] };
    expect(service.ports.map((p) => p.name)).toEqual(['http', 'extender']);
    const policy = rendered.find((o) => o.kind === 'NetworkPolicy' && o.metadata?.name === `${base}-scheduler`)!.spec as { ingress: { ports: { port: string }[] }[] };
    expect(policy.ingress).toEqual([expect.objectContaining({ ports: [{ port: 'extender' }] })]);

    // The generated files work: the extender's listener with tls.crt/tls.key/ca.crt answers a client with
    // kube-scheduler.crt (verifying the server as <release>-scheduler.<namespace>.svc), and no one else.
    const dir = mkdtempSync(join(tmpdir(), 'qm-chart-tls-'));
    const pem = (key: string): string => Buffer.from(secret.data![key]!, 'base64').toString('utf8');
    for (const key of Object.keys(secret.data!)) writeFileSync(join(dir, key), pem(key));
    const server = await startExtenderTlsServer(
      { port: 0, certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCaFile: join(dir, 'ca.crt') },
      '127.0.0.1',
      { requestMs: 30_000, keepAliveMs: 72_000, idleMs: 300_000 },
      (host) => host.post('/extender/filter', () => Promise.resolve({ NodeNames: ['n'], FailedNodes: {}, Error: '' })),
      createLogger('silent', 'deploy-test'),
    );
    const call = (client: boolean): Promise<number | string> =>
      new Promise((resolve) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: new URL(server.url).port,
            path: '/extender/filter',
            method: 'POST',
            servername: `${base}-scheduler.${namespace}.svc`,
            ca: pem('ca.crt'),
            ...(client ? { cert: pem('kube-scheduler.crt'), key: pem('kube-scheduler.key') } : {}),
            agent: false,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', (error) => resolve(error.message));
        req.end('{}');
      });
    try {
      expect(await call(true)).toBe(200);
      expect(typeof (await call(false))).toBe('string'); // the handshake is refused
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('points kube-scheduler at the scheduler processes\' Service (they serve the extender)', () => {
    // deploy/kube-scheduler/config.yaml is written for release `quartermaster` in namespace `quartermaster`.
    const config = parseAllDocuments(readRepoFile('deploy/kube-scheduler/config.yaml'))[0]!.toJS() as { extenders: { urlPrefix: string }[] };
    const target = new URL(config.extenders[0]!.urlPrefix);
    const rendered = helmTemplate('quartermaster');
    const service = rendered.find((o) => o.kind === 'Service' && `${o.metadata?.name}.quartermaster.svc.cluster.local` === target.hostname);
    expect(service).toBeDefined();
    const spec = service!.spec as { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
    expect(spec.selector['app.kubernetes.io/component']).toBe('scheduler');
    expect(spec.ports.map((p) => p.port)).toEqual([Number(target.port)]);
    const scheduler = rendered.find((o) => o.kind === 'Deployment' && o.metadata?.name === 'quartermaster-scheduler')!;
    const container = (scheduler.spec as { template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } }).template.spec.containers[0]!;
    expect(container.ports.find((p) => p.name === spec.ports[0]!.targetPort)?.containerPort).toBe(Number(target.port));
    expect(target.pathname).toBe('/extender');
  });

  it('renders with the `helm template` command deploy/README.md gives, as written', () => {
    const readme = readRepoFile('deploy/README.md');
    const command = /`(helm template [^`]+)`/.exec(readme)?.[1];
    expect(command).toBeDefined();
    const [, ...args] = command!.trim().split(/\s+/);
    const root = new URL('../../', import.meta.url).pathname;
    const result = spawnSync(process.env.QM_HELM!, args, { cwd: root, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const kinds = parseAllDocuments(result.stdout).map((d) => (d.toJS() as { kind?: string } | null)?.kind);
    expect(kinds.filter((k) => k === 'Deployment')).toHaveLength(3);
  });

  it('passes helm lint --strict', () => {
    const chart = new URL('../../deploy/helm/quartermaster', import.meta.url).pathname;
    const result = spawnSync(process.env.QM_HELM!, ['lint', chart, '--strict', '--kube-version', 'v1.34.4'], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });

  it('grants exactly the permissions KubeCluster uses', () => {
    const role = objects.find((o) => o.kind === 'ClusterRole')!;
    const grants = role.rules!.flatMap((rule) =>
      rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group || 'core'} ${resource} ${verb}`))),
    );
    expect(grants.sort()).toEqual(
      [
        'core namespaces get',
        'core namespaces list',
        'core namespaces watch',
        'core nodes get',
        'core nodes list',
        'core nodes watch',
        'core pods get',
        'core pods list',
        'core pods watch',
        'core pods create',
        'core pods delete',
        'core pods patch',
        'core pods/status patch',
        'core events get',
        'core events create',
        'core events patch',
        'core pods/binding create',
        'core pods/eviction create',
        'core services create',
        'core services delete',
        'coordination.k8s.io leases get',
        'coordination.k8s.io leases create',
        'coordination.k8s.io leases update',
        // workloads (Job, JobSet, TrainJob, RayJob: read and suspend; RayCluster: read, and delete a RayJob's to stop
        // a RayJob KubeRay will not suspend; LeaderWorkerSet, StatefulSet: read; every workload kind: watched for
        // its status, WorkloadStatusSync)
        'batch jobs get',
        'batch jobs patch',
        'batch jobs list',
        'batch jobs watch',
        'jobset.x-k8s.io jobsets get',
        'jobset.x-k8s.io jobsets patch',
        'jobset.x-k8s.io jobsets list',
        'jobset.x-k8s.io jobsets watch',
        'trainer.kubeflow.org trainjobs get',
        'trainer.kubeflow.org trainjobs patch',
        'trainer.kubeflow.org trainjobs list',
        'trainer.kubeflow.org trainjobs watch',
        'ray.io rayjobs get',
        'ray.io rayjobs patch',
        'ray.io rayjobs list',
        'ray.io rayjobs watch',
        'ray.io rayclusters get',
        'ray.io rayclusters delete',
        'ray.io rayclusters list',
        'ray.io rayclusters watch',
        'leaderworkerset.x-k8s.io leaderworkersets get',
        'leaderworkerset.x-k8s.io leaderworkersets list',
        'leaderworkerset.x-k8s.io leaderworkersets watch',
        'apps statefulsets get',
      ].sort(),
    );
  });

  it('is accepted by the API server, and the ServiceAccount can do its work and nothing more', async () => {
    const generic = KubernetesObjectApi.makeApiClient(kc);
    // As `helm install -n <namespace>` does: namespaced objects go into the release namespace.
    for (const object of objects) {
      const clusterScoped = object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding';
      await generic.create(clusterScoped ? object : { ...object, metadata: { ...object.metadata, namespace } });
    }
    expect((await core.listNamespacedServiceAccount({ namespace })).items.map((sa) => sa.metadata?.name)).toContain(`${release}-quartermaster`);

    const serviceAccount = `${release}-quartermaster`;
    const cluster = new KubeCluster(asServiceAccount(serviceAccount), { namespace });
    expect((await cluster.listNodes()).map((n) => n.metadata?.name)).toContain(gpuNode);
    await cluster.listPods({ allNamespaces: true });
    const job = {
      id: 'rbac-job',
      name: 'rbac',
      team: 'infra',
      replicas: 1,
      acceleratorsPerReplica: 1,
      template: { image: 'busybox' },
      flavor: { name: 'h100-80gb', resourceName: 'nvidia.com/gpu' },
    };
    const { pod } = await cluster.createPod(podManifestForReplica(job, 0, undefined, { namespace }));
    const name = pod.metadata!.name!;
    expect(await cluster.bindPod(name, gpuNode)).toBe('bound');
    expect(await cluster.evictPod(name)).toBe('evicted');
    expect(await cluster.deletePod(name, { gracePeriodSeconds: 0 })).toBe('deleted');
    const rendezvous = { service: rendezvousServiceName(job.id), namespace, port: DEFAULT_MASTER_PORT, replicas: 2 };
    expect(await ensureRendezvousService(cluster.kubeConfig, job.id, rendezvous)).toBe('created');
    expect(await deleteRendezvousService(cluster.kubeConfig, job.id, namespace)).toBe('deleted');
    expect(await cluster.acquireOrRenewLease('scheduler', 'pod-a', 5000)).toMatchObject({ held: true });
    expect(await cluster.acquireOrRenewLease('scheduler', 'pod-a', 5000)).toMatchObject({ held: true });

    // Not granted: node writes, secrets, other objects' deletion.
    const asSa = asServiceAccount(serviceAccount).makeApiClient(CoreV1Api);
    expect(await statusOf(asSa.createNode({ body: fakeNode(uniqueName('forbidden')) }))).toBe(403);
    expect(await statusOf(asSa.deleteNode({ name: gpuNode2 }))).toBe(403);
    expect(await statusOf(asSa.deleteNamespacedEvent({ name: 'any', namespace }))).toBe(403);
    expect(await statusOf(asSa.listNamespacedSecret({ namespace }))).toBe(403);
    // Namespaces: read, never created unless teamNamespaces.create grants it.
    expect(await statusOf(asSa.listNamespace({}))).toBe(200);
    expect(await statusOf(asSa.createNamespace({ body: { metadata: { name: uniqueName('forbidden') } } }))).toBe(403);
    // The API's ServiceAccount may do nothing at all: no pods, no nodes, no bindings.
    const asApi = asServiceAccount(`${release}-quartermaster-api`).makeApiClient(CoreV1Api);
    expect(await statusOf(asApi.listPodForAllNamespaces({}))).toBe(403);
    expect(await statusOf(asApi.listNode({}))).toBe(403);
    expect(await statusOf(asApi.createNamespacedPod({ namespace, body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }))).toBe(403);
  }, 60_000);

  it('runs with the chart\'s in-cluster kubeconfig and a real ServiceAccount token', async () => {
    // What a pod gets: the ConfigMap's kubeconfig, the projected token and CA at the usual paths
    // (here: temp files), the API server behind kubernetes.default.svc (here: the test one).
    const serviceAccount = `${release}-quartermaster`; // the scheduler's and worker's
    const request = await core.createNamespacedServiceAccountToken({
      name: serviceAccount,
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const dir = mkdtempSync(join(tmpdir(), 'qm-sa-'));
    try {
      writeFileSync(join(dir, 'token'), request.status!.token);
      const cluster = kc.getCurrentCluster()!;
      writeFileSync(join(dir, 'ca.crt'), Buffer.from(cluster.caData!, 'base64'));
      const inCluster = objects
        .find((o) => o.kind === 'ConfigMap')!
        .data!.kubeconfig!.replace('https://kubernetes.default.svc', cluster.server)
        .replace('/var/run/secrets/kubernetes.io/serviceaccount/ca.crt', join(dir, 'ca.crt'))
        .replace('/var/run/secrets/kubernetes.io/serviceaccount/token', join(dir, 'token'));
      const podConfig = new KubeConfig();
      podConfig.loadFromString(inCluster);
      const asPod = new KubeCluster(podConfig);
      expect(asPod.namespace).toBe('default'); // the scheduler picks its namespace from its own settings
      expect(podConfig.getContextObject(podConfig.currentContext)?.namespace).toBe(namespace);
      expect((await asPod.listNodes()).length).toBeGreaterThan(0);
      expect(await statusOf(podConfig.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace }))).toBe(403);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  describe('kube-scheduler with deploy/kube-scheduler/config.yaml', () => {
    let server: Server;
    const calls: { verb: string; pod: string; nodes?: string[] }[] = [];
    const cluster = new KubeCluster(kc, { namespace });

    beforeAll(async () => {
      // A stand-in for the extender endpoints (the real ones are the scheduler processes'): accepts every node, binds.
      server = createServer((req: IncomingMessage, res: ServerResponse) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const args = JSON.parse(body) as Record<string, unknown>;
          const verb = (req.url ?? '').replace('/extender/', '');
          const reply = (value: unknown): void => {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify(value));
          };
          if (verb === 'bind') {
            const bind = args as { PodName: string; PodNamespace: string; Node: string };
            calls.push({ verb, pod: bind.PodName, nodes: [bind.Node] });
            cluster.bindPod(bind.PodName, bind.Node, { namespace: bind.PodNamespace }).then(
              () => reply({}),
              (error: unknown) => reply({ Error: String(error) }),
            );
            return;
          }
          const pod = (args.Pod as V1Pod).metadata?.name ?? '?';
          const names = (args.NodeNames as string[] | undefined) ?? [];
          calls.push({ verb, pod, nodes: names });
          if (verb === 'filter') reply({ NodeNames: names, FailedNodes: {}, Error: '' });
          else if (verb === 'prioritize') reply(names.map((host) => ({ Host: host, Score: 5 })));
          else reply({ Error: `unexpected verb ${verb}` });
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('starts with it, and routes accelerator pods (only) through filter, prioritize and bind', async () => {
      const port = (server.address() as AddressInfo).port;
      const scheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
        const [extender] = config.extenders as Record<string, unknown>[];
        extender!.urlPrefix = `http://127.0.0.1:${port}/extender`;
      });
      try {
        const pod = (name: string, resources: Record<string, string>): V1Pod => ({
          metadata: { name, namespace },
          spec: { nodeSelector: { 'qm-test-release': release }, containers: [{ name: 'c', image: 'x', resources: { limits: resources } }] },
        });
        await core.createNamespacedPod({ namespace, body: pod('gpu-pod', { 'nvidia.com/gpu': '2' }) });
        await core.createNamespacedPod({ namespace, body: pod('cpu-pod', { cpu: '1' }) });
        for (;;) {
          const [gpu, cpu] = await Promise.all([cluster.getPod('gpu-pod'), cluster.getPod('cpu-pod')]);
          if (gpu?.spec?.nodeName && cpu?.spec?.nodeName) {
            expect([gpuNode, gpuNode2]).toContain(gpu.spec.nodeName);
            expect(calls.find((c) => c.verb === 'bind')).toEqual({ verb: 'bind', pod: 'gpu-pod', nodes: [gpu.spec.nodeName] });
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(calls.filter((c) => c.pod === 'gpu-pod').map((c) => c.verb)).toEqual(['filter', 'prioritize', 'bind']);
        // nodeCacheCapable: node names only; kube-scheduler itself dropped the node without GPUs.
        expect(calls.find((c) => c.verb === 'filter')?.nodes?.sort()).toEqual([gpuNode, gpuNode2].sort());
        expect(calls.filter((c) => c.pod === 'cpu-pod')).toEqual([]); // not a managed resource
      } catch (error) {
        throw new Error(`${String(error)}\n--- kube-scheduler log ---\n${scheduler.logs().slice(-3000)}`, { cause: error });
      } finally {
        await scheduler.stop();
      }
    }, 90_000);
  });
});
