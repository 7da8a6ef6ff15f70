// Multi-role gangs on Kubernetes (ADR 0024), with the real JobSet, KubeRay and LeaderWorkerSet controllers: each role of a
// workload is charged and placed as its own pods ask — a JobSet's CPU-only driver holds no GPU beside its GPU
// workers, a RayCluster's actors of 2 GPUs and learners of 4 are charged 2 and 4, an LWS leader without GPUs none — so a team with exactly enough
// quota for the real ask is admitted (charged at the largest role it waited forever); every pod is bound to a
// node the core placed its own role on. A REST job with roles gets pods of each role's shape, with QM_ROLE.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { replicaOfPod } from '#kube';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam } from './controllers/examples.js';
import { eventually, gangBody, type QmEnv } from './scheduler-harness.js';
import { applyManifest, boundPods, deleteManifest, startWorkloadSuite, stopWorkloadSuite, used, workloadJob } from './support/workloads.js';

let controllers: RunningControllers;
let qm: QmEnv;

beforeAll(async () => {
  // h100 (4 nodes × 8): nlp owns it; vision may borrow 16 of it — its quota in these tests.
  ({ qm, controllers } = await startWorkloadSuite('wl-roles', ['jobset', 'kuberay', 'lws'], 4, 16));
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

interface RolesJob {
  id: string;
  state: string;
  roles: { name: string; replicas: number; acceleratorsPerReplica: number }[] | null;
  allocation: { replica: number; node: string; accelerators: number; role: string | null }[];
}

const jobOf = async (id: string): Promise<RolesJob> => (await qm.ok('GET', `/v1/jobs/${id}`)) as RolesJob;

/** Every pod of the job bound to the node of its replica, and that replica is of the pod's own role. */
async function boundByRole(id: string, count: number, roleOfPod: (pod: V1Pod) => string): Promise<V1Pod[]> {
  const pods = await eventually(`${count} pods of ${id} bound`, async () => {
    const bound = await boundPods(qm, id);
    return bound.length === count ? bound : undefined;
  });
  const job = await jobOf(id);
  const byReplica = new Map(job.allocation.map((a) => [a.replica, a]));
  for (const pod of pods) {
    const slot = byReplica.get(replicaOfPod(pod)!);
    expect({ pod: pod.metadata!.name, node: pod.spec!.nodeName, role: roleOfPod(pod) }).toEqual({ pod: pod.metadata!.name, node: slot?.node, role: slot?.role });
  }
  return pods;
}

describe('multi-role workloads', () => {
  it('a JobSet with a CPU-only driver and 4 × 4-GPU workers is charged 16 GPUs, not 20: admitted within a quota of 16', async () => {
    const jobSet = forTeam(examples.parallelJobs(), { team: 'vision', name: 'roles-js', schedulerName: 'quartermaster' });
    jobSet.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
    const replicated = jobSet.spec.replicatedJobs as { name: string; template: { spec: { template: { spec: { containers: { resources?: Record<string, unknown> }[] } } } } }[];
    const workers = replicated.find((rj) => rj.name === 'workers')!;
    for (const c of workers.template.spec.template.spec.containers) c.resources = { limits: { 'nvidia.com/gpu': '4' } };
    await applyManifest(qm, jobSet);

    const job = await workloadJob(qm, 'JobSet', 'roles-js', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    const full = await jobOf(job.id);
    expect(full.roles?.map((r) => [r.name, r.replicas, r.acceleratorsPerReplica]).sort()).toEqual([
      ['driver', 1, 0],
      ['workers', 4, 4],
    ]);
    expect(full.allocation.reduce((sum, a) => sum + a.accelerators, 0)).toBe(16);
    expect(await used(qm, 'vision', 'h100')).toBe(16);
    const pods = await boundByRole(job.id, 5, (p) => p.metadata!.labels!['jobset.sigs.k8s.io/replicatedjob-name']!);
    const driver = pods.find((p) => p.metadata!.labels!['jobset.sigs.k8s.io/replicatedjob-name'] === 'driver')!;
    expect(driver.spec!.containers[0]!.resources?.limits?.['nvidia.com/gpu']).toBeUndefined();

    await deleteManifest(qm, jobSet);
    await eventually('vision holds nothing', async () => ((await used(qm, 'vision', 'h100')) === 0 ? true : undefined));
  }, 240_000);

  it('a RayCluster with a CPU-only head, 2 actors of 2 GPUs and 2 learners of 4 is charged 12 GPUs, not 20', async () => {
    const sample = examples.rayClusterSample(controllers).find((o) => o.kind === 'RayCluster')!;
    const cluster = forTeam(sample, { team: 'vision', name: 'roles-ray', schedulerName: 'quartermaster' });
    cluster.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
    const group = (cluster.spec.workerGroupSpecs as Record<string, unknown>[])[0]!;
    const withGpus = (name: string, gpus: number): Record<string, unknown> => {
      const copy = structuredClone(group) as { groupName: string; replicas: number; minReplicas: number; maxReplicas: number; template: { spec: { containers: { resources?: { limits?: Record<string, unknown> } }[] } } };
      Object.assign(copy, { groupName: name, replicas: 2, minReplicas: 2, maxReplicas: 2 });
      for (const c of copy.template.spec.containers) c.resources = { ...c.resources, limits: { ...c.resources?.limits, 'nvidia.com/gpu': String(gpus) } };
      return copy;
    };
    cluster.spec.workerGroupSpecs = [withGpus('actors', 2), withGpus('learners', 4)];
    await applyManifest(qm, cluster);

    const job = await workloadJob(qm, 'RayCluster', 'roles-ray', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    const full = await jobOf(job.id);
    expect(full.roles?.map((r) => [r.name, r.replicas, r.acceleratorsPerReplica])).toEqual([
      ['head', 1, 0],
      ['actors', 2, 2],
      ['learners', 2, 4],
    ]);
    expect(await used(qm, 'vision', 'h100')).toBe(12);
    await boundByRole(job.id, 5, (p) => (p.metadata!.labels!['ray.io/node-type'] === 'head' ? 'head' : p.metadata!.labels!['ray.io/group']!));

    await deleteManifest(qm, cluster);
    await eventually('vision holds nothing', async () => ((await used(qm, 'vision', 'h100')) === 0 ? true : undefined));
  }, 240_000);

  it('a LeaderWorkerSet group with a CPU-only leader and 2 workers of 8 GPUs is charged 16 GPUs, not 24', async () => {
    const lws = forTeam(examples.leaderWorkerSetSample(controllers)[0]!, {
      team: 'vision',
      name: 'roles-lws',
      schedulerName: 'quartermaster',
      limits: { 'nvidia.com/gpu': '8' },
    });
    lws.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
    const lwt = lws.spec.leaderWorkerTemplate as { size: number; workerTemplate: { spec: { containers: { resources?: { limits?: Record<string, unknown> } }[] } }; leaderTemplate?: unknown };
    const leader = structuredClone(lwt.workerTemplate);
    for (const c of leader.spec.containers) delete c.resources?.limits?.['nvidia.com/gpu'];
    Object.assign(lws.spec, { replicas: 1 });
    Object.assign(lwt, { size: 3, leaderTemplate: leader });
    await applyManifest(qm, lws);

    const job = await workloadJob(qm, 'LeaderWorkerSet', 'roles-lws', (j) => j.state === 'BINDING' || j.state === 'RUNNING');
    const full = await jobOf(job.id);
    expect(full.roles?.map((r) => [r.name, r.replicas, r.acceleratorsPerReplica])).toEqual([
      ['leader', 1, 0],
      ['worker', 2, 8],
    ]);
    expect(await used(qm, 'vision', 'h100')).toBe(16);
    await boundByRole(job.id, 3, (p) => (p.metadata!.labels!['leaderworkerset.sigs.k8s.io/worker-index'] === '0' ? 'leader' : 'worker'));

    await deleteManifest(qm, lws);
    await eventually('vision holds nothing', async () => ((await used(qm, 'vision', 'h100')) === 0 ? true : undefined));
  }, 240_000);

  it('a REST job with a CPU-only launcher and 2 × 8-GPU workers: pods of each role’s shape, QM_ROLE and QM_ROLE_INDEX set', async () => {
    const body = gangBody({ name: 'roles-rest', replicas: undefined, acceleratorsPerReplica: undefined });
    delete body.replicas;
    delete body.acceleratorsPerReplica;
    body.roles = [
      { name: 'launcher', replicas: 1, acceleratorsPerReplica: 0, cpuMillis: 500, memoryMiB: 512 },
      { name: 'worker', replicas: 2, acceleratorsPerReplica: 8 },
    ];
    const { id } = (await qm.ok('POST', '/v1/jobs', body)) as { id: string };
    const pods = await boundByRole(id, 3, (p) => p.metadata!.labels!['quartermaster.io/role']!);
    const shapes = pods
      .map((p) => {
        const env = Object.fromEntries(p.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
        return [env.QM_ROLE, env.QM_ROLE_INDEX, p.spec!.containers[0]!.resources!.requests!.cpu, p.spec!.containers[0]!.resources!.limits?.['nvidia.com/gpu'] ?? '0'];
      })
      .sort();
    expect(shapes).toEqual([
      ['launcher', '0', '500m', '0'],
      ['worker', '0', '1', '8'], // 1000m, as the API server writes it
      ['worker', '1', '1', '8'],
    ]);
    expect(await used(qm, 'vision', 'h100')).toBe(16);
    await qm.ok('DELETE', `/v1/jobs/${id}`);
    await eventually('its pods gone', async () => ((await qm.jobPods(id)).length === 0 ? true : undefined));
  }, 240_000);
});
