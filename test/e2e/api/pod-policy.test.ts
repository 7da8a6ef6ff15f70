// A team's pod policy (issue #27): what its jobs' pod templates may reference in Kubernetes. A member's template
// naming a ServiceAccount, Secret, ConfigMap, PVC, NFS server or tolerated taint the team's policy does not list
// is a 400 naming the field and creates nothing; an empty list allows none; admins set the lists (PUT/PATCH
// /v1/teams/{name} podPolicy), audited as team.updated.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

const fields = (body: { errors: { field: string }[] }): string[] => body.errors.map((e) => e.field);

/** What the service's own chart mounts: a member naming these must never get them. */
const escalating = {
  image: 'busybox',
  serviceAccountName: 'quartermaster',
  automountServiceAccountToken: true,
  volumes: [
    { name: 'creds', secret: { secretName: 'quartermaster' } },
    { name: 'cfg', configMap: { name: 'quartermaster' } },
    { name: 'pgdata', persistentVolumeClaim: { claimName: 'postgres-data' } },
    { name: 'nas', nfs: { server: '10.0.0.5', path: '/' } },
  ],
  imagePullSecrets: ['quartermaster-registry'],
  tolerations: [{ operator: 'Exists' }],
};

describe('team pod policy: what pod templates may reference', () => {
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    h = await startHarness('api_pod_policy');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('a new team allows nothing: every reference in a template is a 400 naming its field, and nothing is written', async () => {
    const team = await h.request('GET', '/v1/teams/vision', { token: alice });
    expect(team.body.podPolicy).toEqual({ serviceAccounts: [], secrets: [], configMaps: [], persistentVolumeClaims: [], nfsServers: [], tolerations: [] });
    const before = await h.counts();
    const r = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'escalate', template: escalating }) });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_FAILED');
    expect(fields(r.body)).toEqual([
      'template.serviceAccountName',
      'template.imagePullSecrets[0]',
      'template.volumes[0].secret.secretName',
      'template.volumes[1].configMap.name',
      'template.volumes[2].persistentVolumeClaim.claimName',
      'template.volumes[3].nfs.server',
      'template.tolerations[0].key',
    ]);
    expect(r.body.errors[0].message).toContain("the team's podPolicy.serviceAccounts is empty");
    // Admins are held to the same lists (they set them).
    expect((await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'escalate', template: escalating }) })).status).toBe(400);
    expect(await h.counts()).toEqual(before);
    // A template that references nothing is unaffected.
    expect((await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'plain' }) })).status).toBe(201);
  });

  it('an admin lists names; listed ones are accepted, others still refused; a PATCH of one list keeps the others', async () => {
    const set = await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: { serviceAccounts: ['trainer'], secrets: ['wandb-key'], nfsServers: ['FS-1.example.com'] } } });
    expect(set.status).toBe(200);
    expect(set.body.podPolicy).toMatchObject({ serviceAccounts: ['trainer'], secrets: ['wandb-key'], configMaps: [] });
    const more = await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: { configMaps: ['train-config'], tolerations: ['example.com/reserved'] } } });
    expect(more.body.podPolicy).toEqual({
      serviceAccounts: ['trainer'],
      secrets: ['wandb-key'],
      configMaps: ['train-config'],
      persistentVolumeClaims: [],
      nfsServers: ['FS-1.example.com'],
      tolerations: ['example.com/reserved'],
    });
    const allowed = {
      image: 'busybox',
      serviceAccountName: 'trainer',
      automountServiceAccountToken: true,
      volumes: [
        { name: 'wandb', secret: { secretName: 'wandb-key' } },
        { name: 'cfg', configMap: { name: 'train-config' } },
        { name: 'ckpt', nfs: { server: 'fs-1.EXAMPLE.com', path: '/ckpt' } },
      ],
      tolerations: [{ key: 'example.com/reserved', operator: 'Exists' }],
    };
    const ok = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'allowed', template: allowed }) });
    expect(ok.status).toBe(201);
    expect(ok.body.template).toMatchObject({ serviceAccountName: 'trainer', automountServiceAccountToken: true });
    const refused = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'escalate', template: escalating }) });
    expect(fields(refused.body)).toContain('template.serviceAccountName');
    expect(refused.body.errors[0].message).toContain('allows trainer');
    // Another team's policy is its own: nlp still allows nothing.
    const bob = await memberToken(h, 'bob', ['nlp']);
    const nlp = await h.request('POST', '/v1/jobs', { token: bob, body: jobBody({ name: 'borrowed-sa', team: 'nlp', template: { image: 'x', serviceAccountName: 'trainer' } }) });
    expect(nlp.status).toBe(400);
    expect(fields(nlp.body)).toEqual(['template.serviceAccountName']);
  });

  it("a token is mounted only from a named ServiceAccount; '*' allows any name of its kind", async () => {
    const anon = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'anon-token', template: { image: 'x', automountServiceAccountToken: true } }) });
    expect(anon.status).toBe(400);
    expect(fields(anon.body)).toEqual(['template.automountServiceAccountToken']);
    await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: { persistentVolumeClaims: ['*'] } } });
    const any = await h.request('POST', '/v1/jobs', {
      token: alice,
      body: jobBody({ name: 'any-pvc', template: { image: 'x', volumes: [{ name: 'a', persistentVolumeClaim: { claimName: 'whatever' } }] } }),
    });
    expect(any.status).toBe(201);
  });

  it('members cannot change a policy; bad lists are a 400 naming the field; null empties every list; every change is audited', async () => {
    const before = await h.counts();
    expect((await h.request('PATCH', '/v1/teams/vision', { token: alice, body: { podPolicy: { serviceAccounts: ['*'] } } })).status).toBe(403);
    const bad = await h.request('PATCH', '/v1/teams/vision', {
      body: { podPolicy: { secrets: ['Not A Name'], tolerations: ['bad key!'], nfsServers: [7], configMaps: ['a', 'a'], serviceAccounts: 'trainer' } },
    });
    expect(bad.status).toBe(400);
    expect(fields(bad.body).sort()).toEqual(['podPolicy.configMaps', 'podPolicy.nfsServers', 'podPolicy.secrets', 'podPolicy.serviceAccounts', 'podPolicy.tolerations']);
    expect((await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: [] } })).status).toBe(400);
    expect(await h.counts()).toEqual(before);

    const cleared = await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: null } });
    expect(cleared.status).toBe(200);
    expect(Object.values(cleared.body.podPolicy).flat()).toEqual([]);
    const audit = await h.request('GET', '/v1/audit?limit=1');
    expect(audit.body.items[0]).toMatchObject({ kind: 'team.updated', team: 'vision' });
    expect(audit.body.items[0].message).toContain('podPolicy');
    // Cleared: the ServiceAccount allowed a moment ago is refused again.
    const again = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'after-clear', template: { image: 'x', serviceAccountName: 'trainer' } }) });
    expect(again.status).toBe(400);
    // PUT keeps a policy it does not mention, as it keeps limits.
    await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy: { secrets: ['wandb-key'] } } });
    const put = await h.request('PUT', '/v1/teams/vision', { body: { cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, maxPriorityClass: null } });
    expect(put.status).toBe(200);
    expect(put.body.podPolicy.secrets).toEqual(['wandb-key']);
  });
});
