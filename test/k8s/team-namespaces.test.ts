// A namespace per team for REST jobs' pods: a job's pods (and its rendezvous Service) go to its team's first
// namespace; a missing one is a 422 naming it, unless Quartermaster may create it (QM_KUBE_CREATE_NAMESPACES, with
// the chart's `create namespaces` grant), labelled with the team and Pod Security `restricted`; pods in a
// namespace that enforces restricted are admitted by the real PodSecurity admission; Quartermaster's own
// namespace is never a team's (400), and the scheduler refuses to start when it is one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Config } from '#common';
import { apiStatusOf, rendezvousServiceName } from '#kube';
import { startKubernetesWatchers } from '../../apps/scheduler/src/kubernetes/kubernetes-mode.js';
import { uniqueName } from './support/cluster.js';
import { eventually, gangBody, kubeTestEnv, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

const RESTRICTED = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };

const submit = async (qm: QmEnv, body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const boundPods = (qm: QmEnv, id: string, n: number): Promise<V1Pod[]> =>
  eventually(`${n} pods of ${id} bound`, async () => {
    const pods = await qm.jobPods(id);
    return pods.length === n && pods.every((p) => p.spec?.nodeName) ? pods : undefined;
  });
const deletePods = async (qm: QmEnv, namespace: string): Promise<void> => {
  const pods = await qm.core.listNamespacedPod({ namespace });
  await Promise.all(pods.items.map((p) => qm.core.deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => undefined)));
};

describe('team namespaces, existing ones only', () => {
  let qm: QmEnv;
  const own = uniqueName('qm-own');
  const teamNamespace = uniqueName('vision-train');
  const missing = uniqueName('nlp-train');

  beforeAll(async () => {
    qm = await startQm('qm-tns', 2, { QM_KUBE_OWN_NAMESPACE: own });
    await seedTenancy(qm);
    await qm.core.createNamespace({ body: { metadata: { name: teamNamespace, labels: RESTRICTED } } });
  }, 30 * 60_000);

  afterAll(async () => {
    for (const namespace of [teamNamespace, missing]) await deletePods(qm, namespace).catch(() => undefined);
    await qm?.close();
  }, 120_000);

  it("makes a REST job's pods and its rendezvous Service in the team's first namespace, hardened where it enforces restricted", async () => {
    await qm.ok('PATCH', '/v1/teams/vision', { namespaces: [teamNamespace, qm.namespace] });
    const id = await submit(qm, gangBody({ name: 'in-team-namespace' }));
    const pods = await boundPods(qm, id, 2);
    expect(pods.map((p) => p.metadata!.namespace)).toEqual([teamNamespace, teamNamespace]);
    // PodSecurity admission (restricted) admitted them: they run as non-root, RuntimeDefault seccomp, no capabilities.
    for (const pod of pods) {
      expect(pod.spec?.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.spec?.containers[0]?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    }
    const service = await qm.core.readNamespacedService({ name: rendezvousServiceName(id), namespace: teamNamespace });
    expect(service.spec?.clusterIP).toBe('None');
    expect(((await qm.ok('GET', `/v1/jobs/${id}`)) as { state: string }).state).toMatch(/BINDING|RUNNING/);

    await qm.ok('DELETE', `/v1/jobs/${id}`);
    await eventually('pods and Service gone', async () => {
      const left = (await qm.jobPods(id)).filter((p) => !p.metadata?.deletionTimestamp);
      const gone = await qm.core.readNamespacedService({ name: rendezvousServiceName(id), namespace: teamNamespace }).then(() => false, (e: unknown) => apiStatusOf(e) === 404);
      return left.length === 0 && gone ? true : undefined;
    });
  }, 120_000);

  it("refuses a job whose team's namespace does not exist (422 naming it), and takes it once an admin made it", async () => {
    await qm.ok('PATCH', '/v1/teams/nlp', { namespaces: [missing] });
    const before = ((await qm.ok('GET', '/v1/jobs?team=nlp&limit=500')) as { items: unknown[] }).items.length;
    const refused = await qm.request('POST', '/v1/jobs', gangBody({ team: 'nlp', name: 'nowhere', replicas: 1 }));
    expect(refused.status).toBe(422);
    const problem = refused.body as { errors: { field: string; message: string }[] };
    expect(problem.errors[0]).toMatchObject({ field: 'team' });
    expect(problem.errors[0]!.message).toContain(`namespace ${missing} does not exist in the cluster`);
    expect(((await qm.ok('GET', '/v1/jobs?team=nlp&limit=500')) as { items: unknown[] }).items.length).toBe(before);

    await qm.core.createNamespace({ body: { metadata: { name: missing } } });
    const id = await eventually('the new namespace seen by the API', async () => {
      const r = await qm.request('POST', '/v1/jobs', gangBody({ team: 'nlp', name: 'somewhere', replicas: 1 }));
      return r.status === 201 ? (r.body as { id: string }).id : undefined;
    });
    const [pod] = await boundPods(qm, id, 1);
    expect(pod!.metadata!.namespace).toBe(missing);
    // No Pod Security label there: the template's pod as it is (the API server defaults an empty securityContext).
    expect(pod!.spec?.securityContext?.runAsNonRoot).toBeUndefined();
    expect(pod!.spec?.containers[0]?.securityContext).toBeUndefined();
    await qm.ok('DELETE', `/v1/jobs/${id}`);
  }, 120_000);

  it("refuses Quartermaster's own namespace as a team's (400), and will not start while a team has it", async () => {
    const patched = await qm.request('PATCH', '/v1/teams/vision', { namespaces: [qm.namespace, own] });
    expect(patched.status).toBe(400);
    expect((patched.body as { errors: { field: string; message: string }[] }).errors[0]).toMatchObject({ field: 'namespaces[1]' });
    expect(JSON.stringify(patched.body)).toContain(`namespace ${own} is Quartermaster's own`);
    // A team named as that namespace, listing none, would have it by default.
    const named = await qm.request('PUT', `/v1/teams/${own}`, {});
    expect(named.status).toBe(400);
    expect((named.body as { errors: { field: string }[] }).errors[0]).toMatchObject({ field: 'namespaces' });
    expect((await qm.request('GET', `/v1/teams/${own}`)).status).toBe(404);

    // Written behind the API's back (or before an upgrade): the scheduler refuses to start.
    await qm.api.database.pool.query('UPDATE teams SET namespaces = $1 WHERE name = $2', [[own], 'nlp']);
    try {
      const env: Record<string, string> = { ...kubeTestEnv('qm-tns-again', qm.namespace), KUBECONFIG: qm.identity.kubeconfigPath, QM_KUBE_OWN_NAMESPACE: own };
      const config = Config.fromEnv(env).with({ databaseUrl: qm.db.url });
      await expect(startKubernetesWatchers(config, qm.api.database, env.QM_REDIS_PREFIX!, pino({ level: 'silent' }), env)).rejects.toThrow(
        new RegExp(`refusing to start: Quartermaster's own namespace ${own} .* team nlp's namespaces include ${own}`),
      );
    } finally {
      await qm.api.database.pool.query('UPDATE teams SET namespaces = $1 WHERE name = $2', [[qm.namespace], 'nlp']);
    }
  }, 120_000);
});

describe('team namespaces, created by Quartermaster when allowed', () => {
  let qm: QmEnv;
  const created = uniqueName('vision-new');

  beforeAll(async () => {
    qm = await startQm('qm-tns-make', 2, { QM_KUBE_CREATE_NAMESPACES: 'true' }, { chartArgs: ['--set', 'teamNamespaces.create=true'] });
    await seedTenancy(qm);
  }, 30 * 60_000);

  afterAll(async () => {
    await deletePods(qm, created).catch(() => undefined);
    await qm?.close();
  }, 120_000);

  it('creates the missing namespace with the team and Pod Security restricted labels, and runs the pods there', async () => {
    await qm.ok('PATCH', '/v1/teams/vision', { namespaces: [created] });
    const id = await submit(qm, gangBody({ name: 'makes-its-namespace', replicas: 1 }));
    const [pod] = await boundPods(qm, id, 1);
    expect(pod!.metadata!.namespace).toBe(created);
    const namespace = await qm.core.readNamespace({ name: created });
    expect(namespace.metadata?.labels).toMatchObject({
      'quartermaster.io/team': 'vision',
      'app.kubernetes.io/managed-by': 'quartermaster',
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
    expect(pod!.spec?.securityContext).toMatchObject({ runAsNonRoot: true });
  }, 120_000);
});
