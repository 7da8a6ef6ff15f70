import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

const fields = (body: { errors: { field: string }[] }): string[] => body.errors.map((e) => e.field).sort();

describe('jobs: submit, idempotency, list, get, events, cancel', () => {
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    h = await startHarness('api_jobs');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('applies the documented defaults', async () => {
    const r = await h.request('POST', '/v1/jobs', {
      token: alice,
      body: { name: 'minimal', team: 'vision', replicas: 3, acceleratorsPerReplica: 1, flavors: ['a100-80gb', 'h100-80gb'], template: { image: 'busybox' } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      state: 'PENDING',
      kind: 'training',
      priority: 0,
      preemptible: true,
      minReplicas: 3,
      cpuMillisPerReplica: 1000,
      memoryMiBPerReplica: 4096,
      flavorSelection: 'preference',
      speeds: null,
      topology: { level: 'none' },
      expectedRuntimeSeconds: null,
      template: { image: 'busybox', cpuMillis: 1000, memoryMiB: 4096 },
      flavor: null,
      allocation: [],
      preemptedBy: null,
      createdBy: 'alice',
      pending: { code: null, position: null, estimatedStartAt: null },
    });
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.transitions).toEqual([{ from: null, to: 'PENDING', at: r.body.submittedAt, reason: 'submitted' }]);
  });

  it('accepts the additions: flavorSelection fastest with speeds, elastic gangs, TPU shapes', async () => {
    const r = await h.request('POST', '/v1/jobs', {
      body: jobBody({ name: 'elastic', replicas: 8, minReplicas: 2, flavors: ['a100-80gb', 'h100-80gb'], flavorSelection: 'fastest', speeds: { 'h100-80gb': 2.5 }, topology: { tpuShape: '2x4' } }),
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ minReplicas: 2, flavorSelection: 'fastest', speeds: { 'h100-80gb': 2.5 }, topology: { level: 'domain', tpuShape: '2x4' } });
  });

  it('Idempotency-Key: same key and body → 200 with the same job; another body → 409; nothing extra written', async () => {
    const headers = { 'idempotency-key': 'retry-me-1' };
    const first = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'idem' }), headers });
    expect(first.status).toBe(201);
    const counts = await h.counts();
    const again = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'idem' }), headers });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    // Defaults spelled out are the same request.
    const spelled = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'idem', preemptible: true, minReplicas: 2 }), headers });
    expect(spelled.status).toBe(200);
    const other = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'idem', replicas: 3 }), headers });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(other.body.detail).toContain(first.body.id);
    expect(await h.counts()).toEqual(counts);
    // Keys belong to their subject: the admin may reuse alice's key string.
    expect((await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'idem' }), headers })).status).toBe(201);
    const badKey = await h.request('POST', '/v1/jobs', { body: jobBody(), headers: { 'idempotency-key': 'x'.repeat(300) } });
    expect(badKey.status).toBe(400);
    expect(badKey.body.errors[0].field).toBe('Idempotency-Key');
  });

  it('concurrent submissions with the same key create one job', async () => {
    const headers = { 'idempotency-key': 'burst-1' };
    const replies = await Promise.all(Array.from({ length: 12 }, () => h.request('POST', '/v1/jobs', { body: jobBody({ name: 'burst' }), headers })));
    const ids = new Set(replies.map((r): string => r.body.id as string));
    expect(ids.size).toBe(1);
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(11);
  });

  it('rejects bad submissions with every offending field (nested paths) and writes nothing', async () => {
    const before = await h.counts();
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['wrong types', { name: 7, replicas: '4', acceleratorsPerReplica: true, preemptible: 'yes', priority: 1.5 }, ['acceleratorsPerReplica', 'name', 'preemptible', 'priority', 'replicas']],
      ['unknown fields, also nested', { gpus: 8, template: { image: 'x', cpu: 1 } }, ['gpus', 'template.cpu']],
      ['negative and huge counts', { replicas: -1, acceleratorsPerReplica: 65, priority: 10_000_000, expectedRuntimeSeconds: 0, template: { image: 'x', cpuMillis: 0, memoryMiB: 1e12 } }, ['acceleratorsPerReplica', 'expectedRuntimeSeconds', 'priority', 'replicas', 'template.cpuMillis', 'template.memoryMiB']],
      ['replicas too large', { replicas: 10_001 }, ['replicas']],
      ['names that are not DNS labels', { name: 'Llama_FT', team: 'Vision', flavors: ['h100-80gb', 'A100'] }, ['flavors', 'name', 'team']],
      ['a name longer than 63', { name: 'a'.repeat(64) }, ['name']],
      ['minReplicas above replicas', { replicas: 2, minReplicas: 3 }, ['minReplicas']],
      ['no flavors, repeated flavors', { flavors: [] }, ['flavors']],
      ['repeated flavors', { flavors: ['h100-80gb', 'h100-80gb'] }, ['flavors']],
      ['speeds for a flavor not listed', { speeds: { 'a100-80gb': 1 } }, ['speeds']],
      ['bad enums', { kind: 'pretraining', flavorSelection: 'cheapest', topology: { level: 'rack' } }, ['flavorSelection', 'kind', 'topology.level']],
      ['tpu shape with zone level', { topology: { level: 'zone', tpuShape: '2x4' } }, ['topology.tpuShape']],
      ['template not an object', { template: 'ubuntu' }, ['template']],
      ['template missing image, bad env', { template: { env: { 'BAD-NAME': 'x', OK: 1 } } }, ['template.env', 'template.image']],
      ['command not strings', { template: { image: 'x', command: ['python', 3] } }, ['template.command']],
    ];
    for (const [what, overrides, expected] of cases) {
      const r = await h.request('POST', '/v1/jobs', { body: jobBody(overrides) });
      expect({ what, status: r.status, fields: fields(r.body) }).toEqual({ what, status: 400, fields: expected });
      expect(r.contentType).toContain('application/problem+json');
    }
    const missing = await h.request('POST', '/v1/jobs', { body: {} });
    expect(fields(missing.body)).toEqual(['acceleratorsPerReplica', 'flavors', 'name', 'replicas', 'team', 'template']);
    expect(missing.body.errors.every((e: { message: string }) => e.message === 'is required')).toBe(true);
    expect(await h.counts()).toEqual(before);
  });

  it('pod template: volumes, mounts, pull secrets, tolerations and service account are kept with the job', async () => {
    const template = {
      image: 'ghcr.io/acme/llama:1',
      command: ['torchrun'],
      args: ['train.py'],
      env: { MASTER_PORT: '23456' },
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'datasets', readOnly: true } },
        { name: 'config', configMap: { name: 'train-config' } },
        { name: 'wandb', secret: { secretName: 'wandb-key', optional: true } },
        { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '64Gi' } },
        { name: 'ckpt', nfs: { server: 'fs-1.example.com', path: '/exports/ckpt' } },
      ],
      volumeMounts: [
        { name: 'data', mountPath: '/data', readOnly: true },
        { name: 'shm', mountPath: '/dev/shm' },
        { name: 'ckpt', mountPath: '/ckpt', subPath: 'llama' },
      ],
      imagePullSecrets: ['registry-creds'],
      tolerations: [
        { key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
        { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      serviceAccountName: 'trainer',
    };
    const podPolicy = {
      serviceAccounts: ['trainer'],
      secrets: ['wandb-key', 'registry-creds'],
      configMaps: ['train-config'],
      persistentVolumeClaims: ['datasets'],
      nfsServers: ['fs-1.example.com'],
      tolerations: ['*'],
    };
    expect((await h.request('PATCH', '/v1/teams/vision', { body: { podPolicy } })).status).toBe(200);
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'with-pod-parts', template }) });
    expect(r.status).toBe(201);
    expect(r.body.template).toEqual({ ...template, cpuMillis: 1000, memoryMiB: 4096 });
    expect((await h.request('GET', `/v1/jobs/${r.body.id}`)).body.template).toEqual(r.body.template);
  });

  it('pod template: every bad part is a 400 naming its field, and nothing is written', async () => {
    const before = await h.counts();
    const t = (extra: Record<string, unknown>): Record<string, unknown> => ({ template: { image: 'x', ...extra } });
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['volume without a source', t({ volumes: [{ name: 'data' }] }), ['template.volumes[0]']],
      ['volume with two sources', t({ volumes: [{ name: 'data', emptyDir: {}, secret: { secretName: 's' } }] }), ['template.volumes[0]']],
      ['volume: bad name, bad claim, unknown source', t({ volumes: [{ name: 'Data_1', persistentVolumeClaim: { claimName: 'UPPER' } }, { name: 'h', hostPath: { path: '/' } }] }), ['template.volumes[0].name', 'template.volumes[0].persistentVolumeClaim.claimName', 'template.volumes[1].hostPath']],
      ['volume name repeated', t({ volumes: [{ name: 'a', emptyDir: {} }, { name: 'a', emptyDir: {} }] }), ['template.volumes[1].name']],
      ['emptyDir: bad medium and size', t({ volumes: [{ name: 'a', emptyDir: { medium: 'Disk', sizeLimit: 'lots' } }] }), ['template.volumes[0].emptyDir.medium', 'template.volumes[0].emptyDir.sizeLimit']],
      ['nfs: relative path', t({ volumes: [{ name: 'a', nfs: { server: 's', path: 'exports' } }] }), ['template.volumes[0].nfs.path']],
      ['mount: relative path, ..', t({ volumes: [{ name: 'a', emptyDir: {} }], volumeMounts: [{ name: 'a', mountPath: 'rel' }, { name: 'a', mountPath: '/c', subPath: '../up' }] }), ['template.volumeMounts[0].mountPath', 'template.volumeMounts[1].subPath']],
      ['mount of an unknown volume', t({ volumes: [{ name: 'a', emptyDir: {} }], volumeMounts: [{ name: 'b', mountPath: '/b' }] }), ['template.volumeMounts[0].name']],
      ['mount path repeated', t({ volumes: [{ name: 'a', emptyDir: {} }], volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'a', mountPath: '/a/' }] }), ['template.volumeMounts[1].mountPath']],
      ['volumes not an array', t({ volumes: { name: 'a' } }), ['template.volumes']],
      ['pull secrets not names', t({ imagePullSecrets: ['Registry Creds', 7] }), ['template.imagePullSecrets']],
      ['tolerations: bad operator and effect', t({ tolerations: [{ key: 'k', operator: 'In', effect: 'Never' }] }), ['template.tolerations[0].effect', 'template.tolerations[0].operator']],
      ['tolerations: value with Exists, seconds without NoExecute, no key', t({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }, { key: 'k', value: 'v', tolerationSeconds: 5 }, { value: 'v' }] }), ['template.tolerations[0].value', 'template.tolerations[1].tolerationSeconds', 'template.tolerations[2].key']],
      ['service account not a name', t({ serviceAccountName: 'Trainer!' }), ['template.serviceAccountName']],
      ['MASTER_PORT not a port', t({ env: { MASTER_PORT: '70000' } }), ['template.env.MASTER_PORT']],
      ['unknown template field', t({ nodeName: 'gpu-1' }), ['template.nodeName']],
    ];
    for (const [what, overrides, expected] of cases) {
      const r = await h.request('POST', '/v1/jobs', { body: jobBody(overrides) });
      expect({ what, status: r.status, fields: fields(r.body) }).toEqual({ what, status: 400, fields: expected });
    }
    expect(await h.counts()).toEqual(before);
  });

  it('unknown team or flavor → 422 naming each, nothing written', async () => {
    const before = await h.counts();
    const team = await h.request('POST', '/v1/jobs', { body: jobBody({ team: 'ghost' }) });
    expect(team.status).toBe(422);
    expect(team.body.errors).toEqual([{ field: 'team', message: 'unknown team: ghost' }]);
    const flavor = await h.request('POST', '/v1/jobs', { body: jobBody({ flavors: ['h100-80gb', 'h200', 'mi300x'] }) });
    expect(flavor.status).toBe(422);
    expect(flavor.body.errors).toEqual([
      { field: 'flavors[1]', message: 'unknown flavor: h200' },
      { field: 'flavors[2]', message: 'unknown flavor: mi300x' },
    ]);
    const keyed = await h.request('POST', '/v1/jobs', { body: jobBody({ team: 'ghost' }), headers: { 'idempotency-key': 'k-422' } });
    expect(keyed.status).toBe(422);
    expect(await h.counts()).toEqual(before);
  });

  it('lists newest first with filters and opaque cursor pagination', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await h.request('POST', '/v1/jobs', { body: jobBody({ name: `page-${i}`, team: 'nlp', kind: i % 2 === 0 ? 'eval' : 'batch-inference' }) });
      expect(r.status).toBe(201);
    }
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/jobs?team=nlp&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await h.request('GET', q);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      all.push(...page.body.items.map((j: { name: string }) => j.name));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(all).toEqual(['page-4', 'page-3', 'page-2', 'page-1', 'page-0']);
    const evals = await h.request('GET', '/v1/jobs?team=nlp&kind=eval');
    expect(evals.body.items.map((j: { name: string }) => j.name)).toEqual(['page-4', 'page-2', 'page-0']);
    const pending = await h.request('GET', '/v1/jobs?state=PENDING&limit=500');
    expect(pending.body.items.every((j: { state: string }) => j.state === 'PENDING')).toBe(true);
    for (const bad of ['?limit=0', '?limit=501', '?limit=abc', '?state=DONE', '?kind=x', '?team=Bad_Team', '?cursor=nonsense', '?sort=asc']) {
      const r = await h.request('GET', `/v1/jobs${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
  });

  it('GET one and its events; unknown or malformed ids are 404', async () => {
    const job = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'watched' }) });
    const one = await h.request('GET', `/v1/jobs/${job.body.id}`, { token: alice });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(job.body);
    expect((await h.request('GET', '/v1/jobs/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await h.request('GET', '/v1/jobs/not-a-uuid')).status).toBe(404);
    expect((await h.request('GET', '/v1/jobs/not-a-uuid/events')).status).toBe(404);
    const events = await h.request('GET', `/v1/jobs/${job.body.id}/events`, { token: alice });
    expect(events.status).toBe(200);
    expect(events.body.items).toEqual([]);
  });

  it('DELETE cancels, is idempotent, and records the transition and event', async () => {
    const job = await h.request('POST', '/v1/jobs', { token: alice, body: jobBody({ name: 'cancel-me' }) });
    const first = await h.request('DELETE', `/v1/jobs/${job.body.id}`, { token: alice });
    expect(first.status).toBe(200);
    expect(first.body.state).toBe('CANCELLED');
    expect(first.body.finishedAt).not.toBeNull();
    expect(first.body.pending).toBeNull();
    const counts = await h.counts();
    const second = await h.request('DELETE', `/v1/jobs/${job.body.id}`, { token: alice });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await h.counts()).toEqual(counts);
    const events = await h.request('GET', `/v1/jobs/${job.body.id}/events`, { token: alice });
    expect(events.body.items).toEqual([expect.objectContaining({ kind: 'job.cancelled', actor: 'alice' })]);
    expect((await h.request('DELETE', '/v1/jobs/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });
});
