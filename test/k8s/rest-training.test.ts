// A REST job really trains on several nodes: Quartermaster gives a multi-pod gang a headless Service, stable
// pod hostnames in it and torchrun's rendezvous variables, and carries the template's volumes, pull secrets,
// tolerations and service account into the pods. The 4 × 8 h100 job's "pods" run here: a fake kubelet gives
// each pod an address (10.a.b.c, reached on this host at 127.a.b.c) and runs its container's command as a local process (a torchrun-style
// rendezvous, support/rendezvous/worker.mjs); names resolve through the Service's EndpointSlices, which the
// real EndpointSlice controller (kube-controller-manager) writes, as CoreDNS would (support/rendezvous/cluster-dns.mjs).
// The Service goes when the job ends.
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, DiscoveryV1Api, type V1Pod } from '@kubernetes/client-node';
import { apiStatusOf, rendezvousServiceName } from '#kube';
import { freePorts, startControllers, type RunningControllers } from './controllers/controllers.js';
import { testKubeConfig } from './support/cluster.js';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const image = join(here, 'support', 'rendezvous'); // the "image": its WORKDIR holds the worker
let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  controllers = await startControllers(['kube-controller-manager']);
  qm = await startQm('qm-train');
  await seedTenancy(qm);
  await qm.core.createNamespacedServiceAccount({ namespace: qm.namespace, body: { metadata: { name: 'trainer' } } });
  // What the team's templates may reference (everything else is refused at submission).
  await qm.ok('PATCH', '/v1/teams/vision', {
    podPolicy: { serviceAccounts: ['trainer', 'root-sa'], secrets: ['registry-creds'], persistentVolumeClaims: ['datasets'], tolerations: ['example.com/reserved'] },
  });
  await eventually('8 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
}, 30 * 60_000);

afterAll(async () => {
  await qm?.close();
  await controllers?.stop();
}, 120_000);

const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const state = async (id: string): Promise<string> => ((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state;
const boundPods = (id: string, n: number): Promise<V1Pod[]> =>
  eventually(`${n} pods of ${id} bound`, async () => {
    const pods = await qm.jobPods(id);
    return pods.length === n && pods.every((p) => p.spec?.nodeName) ? pods.sort((a, b) => replica(a) - replica(b)) : undefined;
  });
const replica = (pod: V1Pod): number => Number(pod.metadata!.labels!['quartermaster.io/replica']);
const serviceOf = async (id: string): Promise<unknown> => {
  try {
    return await qm.core.readNamespacedService({ name: rendezvousServiceName(id), namespace: qm.namespace });
  } catch (error) {
    if (apiStatusOf(error) === 404) return null;
    throw error;
  }
};

/** Runs the pod's container command as a local process with the pod's env, as the kubelet would in the pod. */
function runContainer(pod: V1Pod): Promise<{ code: number | null; out: string; err: string }> {
  const container = pod.spec!.containers[0]!;
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) env[e.name] = e.value ?? '';
  const [command, ...rest] = [...(container.command ?? []), ...(container.args ?? [])];
  expect(command).toBe('node');
  const child = spawn(process.execPath, ['--import', pathToFileURL(join(image, 'cluster-dns.mjs')).href, ...rest], {
    cwd: image,
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: process.env.KUBECONFIG ?? '',
      NODE_PATH: process.env.NODE_PATH ?? '',
      ...env,
      HOSTNAME: pod.spec!.hostname ?? pod.metadata!.name!, // the kubelet sets the pod's hostname
      QM_TEST_POD_NAMESPACE: pod.metadata!.namespace!, // the pod's resolv.conf search path
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [out, err] = ['', ''];
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

describe('REST jobs that really train', () => {
  it("a 4 × 8 h100 torchrun-style job's pods find each other through Quartermaster's rendezvous; its Service goes when it ends", async () => {
    const [masterPort] = await freePorts(1);
    const template = {
      image: 'registry.example/llama-train:1',
      command: ['node'],
      args: ['worker.mjs'],
      env: { MASTER_PORT: String(masterPort), WANDB_PROJECT: 'llama' },
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'datasets', readOnly: true } },
        { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '64Gi' } },
      ],
      volumeMounts: [
        { name: 'data', mountPath: '/data', readOnly: true },
        { name: 'shm', mountPath: '/dev/shm' },
      ],
      imagePullSecrets: ['registry-creds'],
      tolerations: [{ key: 'example.com/reserved', operator: 'Equal', value: 'research', effect: 'NoSchedule' }],
      serviceAccountName: 'trainer',
      cpuMillis: 1000,
      memoryMiB: 1024,
    };
    const id = await submit(gangBody({ name: 'llama', replicas: 4, template }));
    const pods = await boundPods(id, 4);
    expect(new Set(pods.map((p) => p.spec!.nodeName)).size).toBe(4);

    // The template is in every pod; each has a stable hostname in the gang's headless Service.
    const service = rendezvousServiceName(id);
    for (const pod of pods) {
      const r = replica(pod);
      expect(pod.spec).toMatchObject({
        hostname: `llama-${r}`,
        subdomain: service,
        serviceAccountName: 'trainer',
        imagePullSecrets: [{ name: 'registry-creds' }],
        volumes: template.volumes,
        automountServiceAccountToken: false, // the template did not ask for the token
      });
      expect(pod.spec!.tolerations).toContainEqual(template.tolerations[0]);
      expect(pod.spec!.containers[0]!.volumeMounts).toEqual(template.volumeMounts);
      const env = Object.fromEntries(pod.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
      expect(env).toMatchObject({
        MASTER_ADDR: `llama-0.${service}`,
        MASTER_PORT: String(masterPort),
        NNODES: '4',
        NODE_RANK: String(r),
        WORLD_SIZE: '32',
        LOCAL_WORLD_SIZE: '8',
        RANK: String(8 * r),
        PET_NNODES: '4',
        PET_NODE_RANK: String(r),
        PET_NPROC_PER_NODE: '8',
        PET_MASTER_ADDR: `llama-0.${service}`,
        WANDB_PROJECT: 'llama',
      });
    }
    expect(await serviceOf(id)).toMatchObject({
      spec: { clusterIP: 'None', selector: { 'quartermaster.io/job-id': id }, publishNotReadyAddresses: true },
    });

    // The kubelet starts the pods: each gets an address; the EndpointSlice controller publishes them by hostname.
    // Pod addresses in 10/8 (EndpointSlices refuse loopback ones); the pods' processes listen on 127.a.b.c for 10.a.b.c.
    const subnet = `${randomInt(1, 250)}.${randomInt(1, 250)}`;
    const ipOf = (pod: V1Pod): string => `10.${subnet}.${10 + replica(pod)}`;
    const hostIpOf = (pod: V1Pod): string => `127.${subnet}.${10 + replica(pod)}`;
    for (const pod of pods) {
      await qm.cluster.patchPodStatus(
        pod.metadata!.name!,
        { phase: 'Running', podIP: ipOf(pod), podIPs: [{ ip: ipOf(pod) }], conditions: [{ type: 'Ready', status: 'True' }] },
        qm.namespace,
      );
    }
    const discovery = testKubeConfig().makeApiClient(DiscoveryV1Api);
    await eventually('EndpointSlices list every replica by hostname', async () => {
      const slices = await discovery.listNamespacedEndpointSlice({ namespace: qm.namespace, labelSelector: `kubernetes.io/service-name=${service}` });
      const hosts = slices.items.flatMap((s) => (s.endpoints ?? []).map((e) => `${e.hostname}=${e.addresses[0]}`)).sort();
      return hosts.length === 4 ? hosts : undefined;
    });

    // Each pod runs its command; the peers start first and wait for the master, as with torchrun.
    const runs = await Promise.all([...pods].reverse().map(runContainer));
    for (const run of runs) expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' });
    const results = runs.map((r) => JSON.parse(r.out.trim()) as { rank: number; masterIp: string; roster: { rank: number; hostname: string }[] });
    expect(results.map((r) => r.rank).sort()).toEqual([0, 1, 2, 3]);
    for (const result of results) {
      expect(result.masterIp).toBe(hostIpOf(pods[0]!)); // MASTER_ADDR resolved to replica 0's pod
      expect(result.roster.map((p) => `${p.rank}/${p.hostname}`)).toEqual(['0/llama-0', '1/llama-1', '2/llama-2', '3/llama-3']);
    }
    await eventually('job RUNNING', async () => ((await state(id)) === 'RUNNING' ? true : undefined));

    // Training done: the pods succeed, the job ends, its Service is deleted.
    for (const pod of pods) await qm.cluster.patchPodStatus(pod.metadata!.name!, { phase: 'Succeeded' }, qm.namespace);
    await eventually('job SUCCEEDED', async () => ((await state(id)) === 'SUCCEEDED' ? true : undefined));
    await eventually('rendezvous Service deleted', async () => ((await serviceOf(id)) === null ? true : undefined));
  }, 300_000);

  it('a cancelled gang loses its Service with its pods; a single-replica job gets none', async () => {
    const id = await submit(gangBody({ name: 'cancelled', replicas: 2 }));
    await boundPods(id, 2);
    expect(await serviceOf(id)).not.toBeNull();
    await qm.ok('DELETE', `/v1/jobs/${id}`);
    await eventually('pods and Service gone', async () => ((await qm.jobPods(id)).length === 0 && (await serviceOf(id)) === null ? true : undefined));

    const solo = await submit(gangBody({ name: 'solo', replicas: 1 }));
    const [pod] = await boundPods(solo, 1);
    const env = Object.fromEntries(pod!.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ MASTER_ADDR: 'localhost', NNODES: '1', NODE_RANK: '0', WORLD_SIZE: '8' });
    expect(await serviceOf(solo)).toBeNull();
    await qm.ok('DELETE', `/v1/jobs/${solo}`);
    await eventually('solo pod gone', async () => ((await qm.jobPods(solo)).length === 0 ? true : undefined));
  }, 120_000);

  it("a pod the API server refuses (an admission policy) fails the job with the API server's reason, holding nothing", async () => {
    // An admin's policy: pods in this namespace may not run as the ServiceAccount "root-sa".
    const admission = testKubeConfig().makeApiClient(AdmissionregistrationV1Api);
    const name = `qm-test-no-root-sa-${qm.namespace}`;
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
          validations: [{ expression: "!has(object.spec.serviceAccountName) || object.spec.serviceAccountName != 'root-sa'", message: 'pods may not run as root-sa here' }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name },
        spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': qm.namespace } } } },
      },
    });
    try {
      await eventually('the policy is in force', async () => {
        try {
          await qm.core.createNamespacedPod({
            namespace: qm.namespace,
            dryRun: 'All',
            body: { metadata: { name: 'probe' }, spec: { serviceAccountName: 'root-sa', containers: [{ name: 'c', image: 'x' }] } },
          });
          return undefined;
        } catch (error) {
          return apiStatusOf(error) !== undefined && apiStatusOf(error)! < 500 ? true : undefined;
        }
      });
      const id = await submit(gangBody({ name: 'as-root', replicas: 2, template: { image: 'x', serviceAccountName: 'root-sa', cpuMillis: 1000, memoryMiB: 1024 } }));
      const failed = await eventually('job FAILED', async () => {
        const job = (await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string };
        return job.state === 'FAILED' ? job : undefined;
      });
      expect(failed.state).toBe('FAILED');
      const events = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items: { kind: string; message: string }[] };
      expect(events.items.find((e) => e.kind === 'job.failed')?.message).toContain('pods may not run as root-sa here');
      // Its allocation is released and nothing of it is left in the cluster.
      expect(((await qm.ok('GET', `/v1/jobs/${id}`)) as { allocation?: unknown[] }).allocation ?? []).toEqual([]);
      await eventually('no pod, no Service', async () => ((await qm.jobPods(id)).length === 0 && (await serviceOf(id)) === null ? true : undefined));
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name });
      await admission.deleteValidatingAdmissionPolicy({ name });
    }
  }, 120_000);

  it("a queued job whose ServiceAccount the team's pod policy no longer allows fails at admission, no pod made", async () => {
    // No a100 quota for vision while the job is queued, and the policy narrowed meanwhile.
    await qm.ok('PUT', '/v1/teams/vision/quotas/a100', { nominal: 0, borrowingLimit: 0, lendingLimit: null });
    const id = await submit(gangBody({ name: 'narrowed', replicas: 2, flavors: ['a100'], template: { image: 'x', serviceAccountName: 'trainer', cpuMillis: 1000, memoryMiB: 1024 } }));
    await eventually('job waits for quota', async () => (((await qm.ok('GET', `/v1/jobs/${id}`)) as { pending?: { code: string | null } }).pending?.code ? true : undefined));
    expect(await state(id)).toBe('PENDING');
    await qm.ok('PATCH', '/v1/teams/vision', { podPolicy: { serviceAccounts: ['root-sa'] } });
    try {
      await qm.ok('PUT', '/v1/teams/vision/quotas/a100', { nominal: 32, borrowingLimit: 0, lendingLimit: null });
      await eventually('job FAILED', async () => ((await state(id)) === 'FAILED' ? true : undefined));
      const events = (await qm.ok('GET', `/v1/jobs/${id}/events`)) as { items: { kind: string; message: string }[] };
      expect(events.items.find((e) => e.kind === 'job.failed')?.message).toContain(
        "its team's pod policy no longer allows its template: template.serviceAccountName: ServiceAccount trainer is not allowed for this team (the team's podPolicy.serviceAccounts allows root-sa)",
      );
      expect(await qm.jobPods(id)).toEqual([]);
      expect(((await qm.ok('GET', `/v1/jobs/${id}`)) as { allocation?: unknown[] }).allocation ?? []).toEqual([]);
    } finally {
      await qm.ok('PATCH', '/v1/teams/vision', { podPolicy: { serviceAccounts: ['trainer', 'root-sa'] } });
    }
  }, 120_000);
});
