// Workloads imported from Kubernetes choose a priority class as members do over REST (ADR 0022), with the real Job
// controller (kube-controller-manager) and annotated plain pods: label quartermaster.io/priority-class within the
// team's ceiling gives the class's value; a class above it, an unknown one, or a numeric quartermaster.io/priority
// is refused — the workload is not imported (no job written) and says why in a Warning Event. The pods' own
// Kubernetes PriorityClass never gives its number; its name counts only when Quartermaster has a class of that name.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import type { RunningControllers } from './controllers/controllers.js';
import { examples, forTeam, type Manifest } from './controllers/examples.js';
import { testKubeConfig, uniqueName } from './support/cluster.js';
import { eventually, type QmEnv } from './scheduler-harness.js';
import { applyManifest, eventsOn, startWorkloadSuite, stopWorkloadSuite, workloadJob, workloadJobs } from './support/workloads.js';

let controllers: RunningControllers;
let qm: QmEnv;
const scheduling = testKubeConfig().makeApiClient(SchedulingV1Api);
/** Kubernetes PriorityClasses (cluster-wide): one Quartermaster also has (same name), one it does not. */
const shared = uniqueName('qm-pc-shared');
const kubeOnly = uniqueName('qm-pc-kube');

beforeAll(async () => {
  ({ qm, controllers } = await startWorkloadSuite('wl-prio', ['kube-controller-manager'], 2, 16));
  // An infra lead's classes: vision's members may choose up to high; nlp has no ceiling (held to the default).
  await qm.ok('PUT', '/v1/priority-classes/standard', { value: 0, default: true, description: 'most jobs' });
  await qm.ok('PUT', '/v1/priority-classes/high', { value: 1000 });
  await qm.ok('PUT', '/v1/priority-classes/batch', { value: -100 });
  await qm.ok('PUT', '/v1/priority-classes/urgent', { value: 5000 });
  await qm.ok('PUT', `/v1/priority-classes/${shared}`, { value: 4000 });
  await qm.ok('PATCH', '/v1/teams/vision', { maxPriorityClass: 'high' });
  for (const name of [shared, kubeOnly]) await scheduling.createPriorityClass({ body: { metadata: { name }, value: 1_000_000, preemptionPolicy: 'Never' } });
}, 30 * 60_000);

afterAll(async () => {
  await stopWorkloadSuite({ qm, controllers });
  for (const name of [shared, kubeOnly]) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
}, 120_000);

type PriorityView = { priority: number; priorityClass: string | null };

/** The upstream indexed Job as a team runs it, one pod, 0 GPUs; labels on the Job, and a pod priorityClassName. */
function teamJob(name: string, team: string, labels: Record<string, string> = {}, podPriorityClassName?: string): Manifest {
  const job = forTeam(examples.indexedJob(), { team, name, schedulerName: 'quartermaster' });
  job.metadata!.labels = { ...job.metadata!.labels, ...labels };
  job.spec.completions = 1;
  job.spec.parallelism = 1;
  if (podPriorityClassName !== undefined) job.spec.template.spec.priorityClassName = podPriorityClassName;
  return job;
}

/** The Warning Event a refused workload carries, once the importer has looked at it. */
async function refusal(kind: string, name: string): Promise<string> {
  const event = await eventually(`an InvalidWorkload Event on ${kind} ${name}`, async () =>
    (await eventsOn(qm, kind, name)).find((e) => e.reason === 'InvalidWorkload'),
  );
  expect(event.type).toBe('Warning');
  return event.message;
}

describe('the priority class of an imported workload', () => {
  it("a Job labelled with a class within its team's ceiling is imported with that class's value; none gives the default", async () => {
    await applyManifest(qm, teamJob('vision-high', 'vision', { 'quartermaster.io/priority-class': 'high' }));
    await applyManifest(qm, teamJob('nlp-plain', 'nlp'));
    const high = (await workloadJob(qm, 'Job', 'vision-high')) as unknown as PriorityView;
    expect(high).toMatchObject({ priority: 1000, priorityClass: 'high' });
    const plain = (await workloadJob(qm, 'Job', 'nlp-plain')) as unknown as PriorityView;
    expect(plain).toMatchObject({ priority: 0, priorityClass: 'standard' });
  }, 180_000);

  it('a class above the ceiling, or an unknown one, is refused on the workload, naming the classes allowed; no job is written', async () => {
    await applyManifest(qm, teamJob('vision-urgent', 'vision', { 'quartermaster.io/priority-class': 'urgent' }));
    await applyManifest(qm, teamJob('nlp-high', 'nlp', { 'quartermaster.io/priority-class': 'high' }));
    await applyManifest(qm, teamJob('vision-nope', 'vision', { 'quartermaster.io/priority-class': 'nope' }));

    const urgent = await refusal('Job', 'vision-urgent');
    expect(urgent).toContain(`Quartermaster cannot gang-schedule Job ${qm.namespace}/vision-urgent: quartermaster.io/priority-class: priority class urgent (5000) is above what team members may choose (the team's maxPriorityClass is high, 1000): choose high, standard, batch`);
    const nlp = await refusal('Job', 'nlp-high');
    expect(nlp).toContain('priority class high (1000) is above what team members may choose (the team has no maxPriorityClass: up to the default class standard, 0): choose standard, batch');
    const unknown = await refusal('Job', 'vision-nope');
    expect(unknown).toContain('quartermaster.io/priority-class: unknown priority class: nope');
    expect(unknown).toContain(`team vision may choose high, standard, batch`);

    // The refusals were made by the passes that would have submitted them: nothing was written.
    for (const name of ['vision-urgent', 'nlp-high', 'vision-nope']) expect(await workloadJobs(qm, 'Job', name)).toEqual([]);
  }, 180_000);

  it("a Job naming a team that does not take workloads from its namespace is refused on it; imported once an admin adds the namespace", async () => {
    await qm.ok('PUT', '/v1/teams/outsider', { cohort: 'research' });
    await qm.ok('PUT', '/v1/teams/outsider/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
    await applyManifest(qm, teamJob('outsider-job', 'outsider'));
    const refused = await refusal('Job', 'outsider-job');
    expect(refused).toContain(`quartermaster.io/team: team outsider does not take workloads from namespace ${qm.namespace} (its namespaces: outsider)`);
    expect(await workloadJobs(qm, 'Job', 'outsider-job')).toEqual([]);
    await qm.ok('PATCH', '/v1/teams/outsider', { namespaces: [qm.namespace] });
    const job = await workloadJob(qm, 'Job', 'outsider-job');
    expect(job).toMatchObject({ team: 'outsider' });
  }, 180_000);

  it('a numeric quartermaster.io/priority is refused on the workload (numbers are for admins over REST); no job is written', async () => {
    await applyManifest(qm, teamJob('vision-numeric', 'vision', { 'quartermaster.io/priority': '100' }));
    // Whichever comes first: before ADR 0022's Kubernetes side, the number was taken and the job written.
    const outcome = await eventually('vision-numeric imported or refused', async () => {
      if ((await workloadJobs(qm, 'Job', 'vision-numeric')).length > 0) return 'imported';
      return (await eventsOn(qm, 'Job', 'vision-numeric')).some((e) => e.reason === 'InvalidWorkload') ? 'refused' : undefined;
    });
    expect(outcome).toBe('refused');
    const numeric = await refusal('Job', 'vision-numeric');
    expect(numeric).toContain('quartermaster.io/priority: a numeric priority is not taken from Kubernetes (got "100"): use quartermaster.io/priority-class');
    expect(numeric).toContain('numbers are for admins over REST');
    expect(await workloadJobs(qm, 'Job', 'vision-numeric')).toEqual([]);
  }, 180_000);

  it("the pods' Kubernetes PriorityClass never gives its number; its name counts when Quartermaster has that class, under the ceiling", async () => {
    await applyManifest(qm, teamJob('vision-kube-class', 'vision', {}, kubeOnly));
    const ignored = (await workloadJob(qm, 'Job', 'vision-kube-class')) as unknown as PriorityView;
    expect(ignored).toMatchObject({ priority: 0, priorityClass: 'standard' });

    await applyManifest(qm, teamJob('vision-shared-class', 'vision', {}, shared));
    expect(await refusal('Job', 'vision-shared-class')).toContain(`spec.priorityClassName: priority class ${shared} (4000) is above what team members may choose`);
    expect(await workloadJobs(qm, 'Job', 'vision-shared-class')).toEqual([]);
  }, 180_000);

  it('annotated plain pods: a class within the ceiling is imported with its value; above it, or a number, the pods say why and no job is written', async () => {
    const gangPod = (name: string, extra: Record<string, string>): V1Pod => ({
      metadata: {
        name,
        annotations: { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': name, 'quartermaster.io/gang-size': '1', 'quartermaster.io/flavor': 'a100', ...extra },
      },
      spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
    });
    const jobsNamed = async (name: string): Promise<(PriorityView & { id: string })[]> =>
      ((await qm.ok('GET', '/v1/jobs?limit=500')) as { items: (PriorityView & { id: string; name: string })[] }).items.filter((j) => j.name === name);
    for (const [name, extra] of [
      ['gang-high', { 'quartermaster.io/priority-class': 'high' }],
      ['gang-urgent', { 'quartermaster.io/priority-class': 'urgent' }],
      ['gang-numeric', { 'quartermaster.io/priority': '100' }],
    ] as const) await qm.core.createNamespacedPod({ namespace: qm.namespace, body: gangPod(name, extra) });

    const [imported] = await eventually('gang-high imported', async () => {
      const jobs = await jobsNamed('gang-high');
      return jobs.length > 0 ? jobs : undefined;
    });
    expect(imported).toMatchObject({ priority: 1000, priorityClass: 'high' });

    const said = async (pod: string): Promise<string> =>
      (await eventually(`an InvalidGang Event on pod ${pod}`, async () => (await eventsOn(qm, 'Pod', pod)).find((e) => e.reason === 'InvalidGang'))).message;
    expect(await said('gang-urgent')).toContain('quartermaster.io/priority-class: priority class urgent (5000) is above what team members may choose');
    expect(await said('gang-numeric')).toContain('quartermaster.io/priority: a numeric priority is not taken from Kubernetes (got "100")');
    expect(await jobsNamed('gang-urgent')).toEqual([]);
    expect(await jobsNamed('gang-numeric')).toEqual([]);
  }, 180_000);
});
