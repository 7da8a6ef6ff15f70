import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

const fields = (body: { errors: { field: string }[] }): string[] => body.errors.map((e) => e.field).sort();

describe('tenancy: flavors, cohorts, teams, quotas, nodes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_tenancy');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  describe('flavors', () => {
    it('PUT creates (201) then replaces (200); defaults the resource name by kind', async () => {
      const created = await h.request('PUT', '/v1/flavors/trn1', { body: { kind: 'aws-trainium' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'trn1', kind: 'aws-trainium', resourceName: 'aws.amazon.com/neuron', nodeLabels: {}, relativeSpeed: 1, costPerHour: 0, memoryGiB: null });
      const replaced = await h.request('PUT', '/v1/flavors/trn1', {
        body: { kind: 'aws-trainium', resourceName: 'aws.amazon.com/neuroncore', nodeLabels: { 'node.kubernetes.io/instance-type': 'trn1.32xlarge' }, memoryGiB: 32, relativeSpeed: 0.8, costPerHour: 1.3 },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ resourceName: 'aws.amazon.com/neuroncore', memoryGiB: 32, relativeSpeed: 0.8, costPerHour: 1.3 });
      const one = await h.request('GET', '/v1/flavors/trn1');
      expect(one.body).toEqual(replaced.body);
      const list = await h.request('GET', '/v1/flavors');
      expect(list.body.items.map((f: { name: string }) => f.name)).toEqual(['a100-80gb', 'h100-80gb', 'trn1']);
      expect((await h.request('GET', '/v1/flavors/nope')).status).toBe(404);
    });

    it('topologyLabels: defaults by kind, overridable per level, shown resolved; bad keys are 400 naming the level', async () => {
      const tpu = await h.request('PUT', '/v1/flavors/tpu-v6e', { body: { kind: 'google-tpu' } });
      expect(tpu.status).toBe(201);
      expect(tpu.body.topologyLabels).toEqual({
        zone: 'topology.kubernetes.io/zone',
        block: 'cloud.google.com/gce-topology-block',
        domain: 'cloud.google.com/gke-nodepool',
        tpuShape: 'cloud.google.com/gke-tpu-topology',
      });
      const trn = await h.request('PUT', '/v1/flavors/trn2', { body: { kind: 'aws-trainium', topologyLabels: { domain: 'example.com/ultraserver' } } });
      expect(trn.body.topologyLabels).toEqual({
        zone: 'topology.kubernetes.io/zone',
        block: 'topology.k8s.aws/network-node-layer-2',
        domain: 'example.com/ultraserver',
        tpuShape: 'cloud.google.com/gke-tpu-topology',
      });
      expect((await h.request('GET', '/v1/flavors/trn2')).body.topologyLabels.domain).toBe('example.com/ultraserver');
      const h100 = await h.request('GET', '/v1/flavors/h100-80gb');
      expect(h100.body.topologyLabels).toMatchObject({ domain: 'nvidia.com/gpu.clique' });

      const before = await h.counts();
      const bad = await h.request('PUT', '/v1/flavors/trn2', { body: { kind: 'aws-trainium', topologyLabels: { domain: 'not a key!', block: '', rack: 'example.com/rack' } } });
      expect(bad.status).toBe(400);
      expect(fields(bad.body)).toEqual(['topologyLabels.block', 'topologyLabels.domain', 'topologyLabels.rack']);
      expect(bad.body.errors.find((e: { field: string }) => e.field === 'topologyLabels.domain').message).toContain('Kubernetes label key');
      const notObject = await h.request('PUT', '/v1/flavors/trn2', { body: { kind: 'aws-trainium', topologyLabels: 'nvidia.com/gpu.clique' } });
      expect(notObject.status).toBe(400);
      expect(fields(notObject.body)).toEqual(['topologyLabels']);
      expect((await h.request('GET', '/v1/flavors/trn2')).body.topologyLabels.domain).toBe('example.com/ultraserver');
      expect(await h.counts()).toEqual(before);
      for (const name of ['tpu-v6e', 'trn2']) expect((await h.request('DELETE', `/v1/flavors/${name}`)).status).toBe(204);
    });

    it('rejects bad flavors with every bad field, and writes nothing', async () => {
      const before = await h.counts();
      const r = await h.request('PUT', '/v1/flavors/x1', {
        body: { kind: 'amd-gpu', resourceName: 'gpu', nodeLabels: { 'bad key!': 'v' }, memoryGiB: -1, relativeSpeed: 0, costPerHour: 'cheap', colour: 'red' },
      });
      expect(r.status).toBe(400);
      expect(fields(r.body)).toEqual(['colour', 'costPerHour', 'kind', 'memoryGiB', 'nodeLabels', 'relativeSpeed', 'resourceName']);
      for (const name of ['H100', 'h100_80gb', '-h100', 'a'.repeat(64)]) {
        const bad = await h.request('PUT', `/v1/flavors/${name}`, { body: { kind: 'nvidia-gpu' } });
        expect({ name, status: bad.status }).toEqual({ name, status: 400 });
      }
      expect(await h.counts()).toEqual(before);
    });

    it('DELETE is 409 while a node, a quota or an unfinished job uses the flavor; 204 once unused; 404 after', async () => {
      const before = await h.counts();
      const inUse = await h.request('DELETE', '/v1/flavors/h100-80gb');
      expect(inUse.status).toBe(409);
      expect(inUse.body.code).toBe('FLAVOR_IN_USE');
      expect(inUse.body.detail).toMatch(/2 node\(s\), 2 quota\(s\)/);
      expect(await h.counts()).toEqual(before);

      await h.request('PUT', '/v1/flavors/tpu-v5e', { body: { kind: 'google-tpu' } });
      const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'uses-tpu', flavors: ['tpu-v5e'] }) });
      expect(job.status).toBe(201);
      const byJob = await h.request('DELETE', '/v1/flavors/tpu-v5e');
      expect(byJob.status).toBe(409);
      expect(byJob.body.detail).toContain('1 unfinished job(s)');
      expect((await h.request('DELETE', `/v1/jobs/${job.body.id}`)).status).toBe(200);
      expect((await h.request('DELETE', '/v1/flavors/tpu-v5e')).status).toBe(204);
      expect((await h.request('DELETE', '/v1/flavors/tpu-v5e')).status).toBe(404);
    });
  });

  describe('cohorts and teams', () => {
    it('a cohort lists its members, capacity and usage per flavor', async () => {
      const r = await h.request('GET', '/v1/cohorts/research');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: 'research', description: 'research pool', members: ['nlp', 'vision'] });
      expect(r.body.flavors).toEqual([{ flavor: 'h100-80gb', capacity: 32, used: 0, borrowed: 0, lent: 0, pendingDemand: 0 }]);
      const created = await h.request('PUT', '/v1/cohorts/empty', {});
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'empty', description: '', members: [], flavors: [] });
      expect((await h.request('PUT', '/v1/cohorts/empty', { body: { description: 'x' } })).status).toBe(200);
      expect((await h.request('GET', '/v1/cohorts')).body.items.map((c: { name: string }) => c.name)).toEqual(['empty', 'research']);
      expect((await h.request('GET', '/v1/cohorts/none')).status).toBe(404);
    });

    it('a team shows its settings and, per flavor, quota and live usage', async () => {
      const r = await h.request('GET', '/v1/teams/nlp');
      expect(r.body).toMatchObject({
        name: 'nlp',
        cohort: 'research',
        fairShareWeight: 2,
        preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' },
        quotas: [{ flavor: 'h100-80gb', nominal: 16, borrowingLimit: null, lendingLimit: 8, used: 0, borrowed: 0, lent: 0, pendingDemand: 0 }],
      });
      const list = await h.request('GET', '/v1/teams');
      expect(list.body.items.map((t: { name: string }) => t.name)).toEqual(['nlp', 'vision']);
      expect((await h.request('GET', '/v1/teams/ghost')).status).toBe(404);
    });

    it('PUT team: 201/200, unknown cohort → 422, bad fields → 400; nothing written on rejection', async () => {
      const created = await h.request('PUT', '/v1/teams/speech', { body: { preemption: { withinTeam: 'Never', reclaimWithinCohort: 'LowerPriority' } } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'LowerPriority' }, quotas: [] });
      const full = { cohort: 'research', fairShareWeight: 3, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'LowerPriority' } };
      expect((await h.request('PUT', '/v1/teams/speech', { body: full })).status).toBe(200);
      const before = await h.counts();
      const unknown = await h.request('PUT', '/v1/teams/speech', { body: { ...full, cohort: 'ghost' } });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors).toEqual([{ field: 'cohort', message: 'unknown cohort: ghost' }]);
      const bad = await h.request('PUT', '/v1/teams/speech', { body: { cohort: 'Research!', fairShareWeight: 0, preemption: { withinTeam: 'Always', other: 1 } } });
      expect(bad.status).toBe(400);
      expect(fields(bad.body)).toEqual(['cohort', 'fairShareWeight', 'preemption.other', 'preemption.withinTeam']);
      expect(await h.counts()).toEqual(before);
      expect((await h.request('GET', '/v1/teams/speech')).body).toMatchObject({ cohort: 'research', fairShareWeight: 3 });
    });
  });

  describe('quotas', () => {
    it('every change is an audited event with who, when, before and after', async () => {
      const created = await h.request('PUT', '/v1/teams/vision/quotas/a100-80gb', { body: { nominal: 8 } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ team: 'vision', flavor: 'a100-80gb', nominal: 8, borrowingLimit: null, lendingLimit: null, before: null });
      const updated = await h.request('PUT', '/v1/teams/vision/quotas/a100-80gb', { body: { nominal: 12, borrowingLimit: 4, lendingLimit: 0 } });
      expect(updated.status).toBe(200);
      expect(updated.body.before).toMatchObject({ nominal: 8, borrowingLimit: null });
      const deleted = await h.request('DELETE', '/v1/teams/vision/quotas/a100-80gb');
      expect(deleted.status).toBe(200);
      expect((await h.request('DELETE', '/v1/teams/vision/quotas/a100-80gb')).status).toBe(404);

      const { rows } = await h.pg.query(
        `SELECT kind, actor, team, at, data FROM events WHERE kind LIKE 'quota.%' AND data->>'flavor' = 'a100-80gb' ORDER BY id`,
      );
      expect(rows.map((r): string => r.kind as string)).toEqual(['quota.created', 'quota.updated', 'quota.deleted']);
      expect(rows.every((r) => r.actor === 'admin' && r.team === 'vision' && r.at instanceof Date)).toBe(true);
      expect(rows[1].data.before).toMatchObject({ nominal: 8, borrowingLimit: null, lendingLimit: null });
      expect(rows[1].data.after).toMatchObject({ nominal: 12, borrowingLimit: 4, lendingLimit: 0 });
      expect(rows[2].data.after).toBeNull();
      expect(String(updated.body.eventId)).toMatch(/^\d+$/);
    });

    it('unknown team or flavor → 422 naming each; bad numbers → 400 with every field; nothing written', async () => {
      const before = await h.counts();
      const unknown = await h.request('PUT', '/v1/teams/ghost/quotas/h200', { body: { nominal: 1 } });
      expect(unknown.status).toBe(422);
      expect(fields(unknown.body)).toEqual(['flavor', 'team']);
      const bad = await h.request('PUT', '/v1/teams/vision/quotas/h100-80gb', { body: { nominal: -1, borrowingLimit: 1.5, lendingLimit: 1e12, extra: true } });
      expect(bad.status).toBe(400);
      expect(fields(bad.body)).toEqual(['borrowingLimit', 'extra', 'lendingLimit', 'nominal']);
      const missing = await h.request('PUT', '/v1/teams/vision/quotas/h100-80gb', { body: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual([{ field: 'nominal', message: 'is required' }]);
      const wrongType = await h.request('PUT', '/v1/teams/vision/quotas/h100-80gb', { body: { nominal: '32' } });
      expect(wrongType.body.errors).toEqual([{ field: 'nominal', message: 'must be an integer' }]);
      expect(await h.counts()).toEqual(before);
    });
  });

  describe('nodes', () => {
    it('PUT creates/replaces a node; unknown flavor → 422; bad fields → 400', async () => {
      const r = await h.request('PUT', '/v1/nodes/tpu-host-1', { body: { flavor: 'a100-80gb', accelerators: 4, cpuMillis: 1000, memoryMiB: 2048, topology: { zone: 'z2', domain: 'slice-1', tpuShape: '2x4' }, schedulable: false } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ name: 'tpu-host-1', topology: { zone: 'z2', domain: 'slice-1', tpuShape: '2x4' }, schedulable: false, source: 'api' });
      expect((await h.request('PUT', '/v1/nodes/tpu-host-1', { body: { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 1000, memoryMiB: 2048 } })).status).toBe(200);
      const list = await h.request('GET', '/v1/nodes');
      expect(list.body.items.map((n: { name: string }) => n.name)).toEqual(['gpu-1', 'gpu-2', 'tpu-host-1']);
      expect((await h.request('GET', '/v1/nodes/tpu-host-1')).body.topology).toEqual({});
      const before = await h.counts();
      const unknown = await h.request('PUT', '/v1/nodes/n9', { body: { flavor: 'ghost', accelerators: 8, cpuMillis: 1, memoryMiB: 1 } });
      expect(unknown.status).toBe(422);
      const bad = await h.request('PUT', '/v1/nodes/n9', { body: { flavor: 'a100-80gb', accelerators: 2000, cpuMillis: -5, topology: { tpuShape: 'big', rack: 1 }, schedulable: 'yes' } });
      expect(bad.status).toBe(400);
      expect(fields(bad.body)).toEqual(['accelerators', 'cpuMillis', 'memoryMiB', 'schedulable', 'topology.rack', 'topology.tpuShape']);
      expect(await h.counts()).toEqual(before);
    });

    it('accepts Kubernetes node names (DNS-1123 subdomains) and rejects others with the rule', async () => {
      const name = 'ip-10-0-1-23.us-west-2.compute.internal';
      const r = await h.request('PUT', `/v1/nodes/${name}`, { body: { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 1000, memoryMiB: 2048 } });
      expect(r.status).toBe(201);
      expect((await h.request('GET', `/v1/nodes/${name}`)).body.name).toBe(name);
      const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`; // 253 characters
      expect((await h.request('PUT', `/v1/nodes/${longest}`, { body: { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 1000, memoryMiB: 2048 } })).status).toBe(201);
      expect((await h.request('GET', `/v1/nodes/${longest}`)).body.name).toBe(longest);
      const before = await h.counts();
      for (const bad of ['Upper.case', 'a..b', 'ends-with-dot.', '-leading', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}`]) {
        const res = await h.request('PUT', `/v1/nodes/${encodeURIComponent(bad)}`, { body: { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 1000, memoryMiB: 2048 } });
        expect(res.status).toBe(400);
        expect(res.body.errors[0].message).toMatch(/DNS-1123 subdomain/);
      }
      expect(await h.counts()).toEqual(before);
    });
  });
});
