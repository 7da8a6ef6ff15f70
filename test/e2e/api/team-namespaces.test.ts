// A team's namespaces (issue #27): the Kubernetes namespaces whose annotated pods and workloads may name it.
// By default its own name; admins set the list (PUT/PATCH /v1/teams/{name} namespaces), audited; members read it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

describe('team namespaces', () => {
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    h = await startHarness('api_team_namespaces');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it("default to the team's own name; an admin lists them, null restores the default; every change audited", async () => {
    expect((await h.request('GET', '/v1/teams/vision', { token: alice })).body.namespaces).toEqual(['vision']);
    const set = await h.request('PATCH', '/v1/teams/vision', { body: { namespaces: ['cv-train', 'cv-eval'] } });
    expect(set.status).toBe(200);
    expect(set.body.namespaces).toEqual(['cv-train', 'cv-eval']);
    const audit = await h.request('GET', '/v1/audit?limit=1');
    expect(audit.body.items[0]).toMatchObject({ kind: 'team.updated', team: 'vision' });
    expect(audit.body.items[0].message).toContain('namespaces');
    // Kept by a PUT that does not name them, as limits and the pod policy are.
    const put = await h.request('PUT', '/v1/teams/vision', { body: { cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, maxPriorityClass: null } });
    expect(put.body.namespaces).toEqual(['cv-train', 'cv-eval']);
    expect((await h.request('PATCH', '/v1/teams/vision', { body: { namespaces: null } })).body.namespaces).toEqual(['vision']);
  });

  it('bad lists are a 400 naming the field and change nothing; members may not set them', async () => {
    const before = await h.counts();
    for (const namespaces of [['Not_A_Namespace'], ['a', 'a'], 'vision', [7]]) {
      const r = await h.request('PATCH', '/v1/teams/vision', { body: { namespaces } });
      expect(r.status).toBe(400);
      expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['namespaces']);
    }
    expect((await h.request('PATCH', '/v1/teams/vision', { token: alice, body: { namespaces: ['mine'] } })).status).toBe(403);
    expect(await h.counts()).toEqual(before);
  });

  it("fix a REST job's pods' namespace at submission: the team's first, shown on the job", async () => {
    await h.request('PATCH', '/v1/teams/vision', { body: { namespaces: ['cv-train', 'cv-eval'] } });
    const first = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'ns-a' }) });
    expect(first.status).toBe(201);
    expect(first.body.namespace).toBe('cv-train');
    await h.request('PATCH', '/v1/teams/vision', { body: { namespaces: null } });
    const second = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'ns-b' }) });
    expect(second.body.namespace).toBe('vision');
    // Kept as it was given, in the job and in lists.
    expect((await h.request('GET', `/v1/jobs/${first.body.id}`, { token: alice })).body.namespace).toBe('cv-train');
    const listed = await h.request('GET', '/v1/jobs?team=vision', { token: alice });
    expect(listed.body.items.find((j: { id: string }) => j.id === first.body.id).namespace).toBe('cv-train');
  });
});
