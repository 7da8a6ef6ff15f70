import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * JSON clients send `null` for "not set". For every request body in the published contract, a valid body with
 * any one of its fields (also one level down) replaced by null is answered with a 2xx or a problem+json 4xx —
 * never a 5xx. The field list comes from libs/api-client/openapi.json, so a new field is covered without
 * editing this test.
 */
interface Schema {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  properties?: Record<string, Schema>;
}
const contract = JSON.parse(readFileSync(new URL('../../../libs/api-client/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
};
const resolve = (s: Schema): Schema => (s.$ref ? resolve(contract.components.schemas[s.$ref.split('/').pop()!]!) : s.allOf?.length === 1 ? resolve(s.allOf[0]!) : s);

/** Every field path of a body schema: `a`, and `a.b` for an object-typed `a` with declared properties. */
function fieldPaths(schema: Schema): string[][] {
  const out: string[][] = [];
  for (const [name, prop] of Object.entries(resolve(schema).properties ?? {})) {
    out.push([name]);
    for (const inner of Object.keys(resolve(prop).properties ?? {})) out.push([name, inner]);
  }
  return out;
}

function withNull(body: Record<string, unknown>, path: string[]): Record<string, unknown> {
  const copy = structuredClone(body);
  let at: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[path.at(-1)!] = null;
  return copy;
}

describe('null in any request field is a 2xx or a 4xx, never a 5xx', () => {
  let h: Harness;
  let alice: string;
  let jobId: string;
  let pendingId: string;
  let n = 0;
  const fresh = (prefix: string): string => `${prefix}-${++n}`;

  /** The operations with a body: the path to call and a valid body (fresh names, so a PUT creates). */
  const valid: Record<string, () => { path: string; body: Record<string, unknown> }> = {
    'put /v1/cohorts/{name}': () => ({ path: `/v1/cohorts/${fresh('c')}`, body: { description: 'a pool' } }),
    'put /v1/flavors/{name}': () => ({ path: `/v1/flavors/${fresh('f')}`, body: { kind: 'nvidia-gpu', memoryGiB: 80, relativeSpeed: 1, costPerHour: 2, resourceName: 'nvidia.com/gpu', nodeLabels: { a: 'b' }, topologyLabels: { zone: 'topology.kubernetes.io/zone' } } }),
    'post /v1/jobs': () => ({ path: '/v1/jobs', body: jobBody({ name: fresh('j'), priority: 5, minReplicas: 1, speeds: { 'h100-80gb': 1 }, expectedRuntimeSeconds: 60, topology: { level: 'zone' }, checkpoint: { intervalSeconds: 600, gracePeriodSeconds: 30 } }) }),
    'post /v1/jobs/cancellations': () => ({ path: '/v1/jobs/cancellations', body: { team: 'nlp', states: ['PENDING'], name: fresh('none'), createdBy: 'nobody', limit: 10 } }),
    'post /v1/jobs/holds': () => ({ path: '/v1/jobs/holds', body: { team: 'nlp', name: fresh('none'), createdBy: 'nobody', limit: 10, dryRun: true } }),
    'post /v1/jobs/releases': () => ({ path: '/v1/jobs/releases', body: { team: 'nlp', name: fresh('none'), createdBy: 'nobody', limit: 10, dryRun: true } }),
    'post /v1/jobs/{id}/priority': () => ({ path: `/v1/jobs/${pendingId}/priority`, body: { priorityClass: 'high' } }),
    'post /v1/jobs/{id}/progress': () => ({ path: `/v1/jobs/${jobId}/progress`, body: { completedFraction: 0.5, lastCheckpointAt: new Date().toISOString() } }),
    'post /v1/jobs/{id}/status': () => ({ path: `/v1/jobs/${jobId}/status`, body: { state: 'RUNNING', reason: 'started' } }),
    'post /v1/nodes/{name}/drain': () => ({ path: '/v1/nodes/idle-node/drain', body: { dryRun: true } }),
    'put /v1/nodes/{name}': () => ({ path: `/v1/nodes/${fresh('n')}`, body: { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576, schedulable: true, labels: { a: 'b' }, topology: { zone: 'z9', block: 'b9' } } }),
    'put /v1/priority-classes/{name}': () => ({ path: `/v1/priority-classes/${fresh('p')}`, body: { value: 10, default: false, description: 'x' } }),
    'patch /v1/teams/{name}': () => ({ path: '/v1/teams/nlp', body: { cohort: 'research', fairShareWeight: 2, maxPriorityClass: 'high', preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' }, limits: { maxPendingJobs: 5000, submissionsPerSecond: 500 } } }),
    'put /v1/teams/{name}': () => ({ path: `/v1/teams/${fresh('t')}`, body: { cohort: 'research', fairShareWeight: 1, maxPriorityClass: 'high', preemption: { withinTeam: 'Never', reclaimWithinCohort: 'LowerPriority' }, limits: { maxPendingJobs: 5000, submissionsPerSecond: 500 } } }),
    'put /v1/teams/{team}/budgets/{period}': () => ({ path: '/v1/teams/nlp/budgets/month', body: { limit: 500, unit: 'accelerator-hours', onExhausted: 'block' } }),
    'put /v1/teams/{team}/quotas/{flavor}': () => ({ path: '/v1/teams/nlp/quotas/a100-80gb', body: { nominal: 8, borrowingLimit: 4, lendingLimit: 2, cpuMillisLimit: 640_000, memoryMiBLimit: 4_194_304 } }),
    'post /v1/tokens': () => ({ path: '/v1/tokens', body: { subject: fresh('s'), role: 'member', teams: ['vision'], expiresAt: '2099-01-01T00:00:00Z' } }),
  };

  beforeAll(async () => {
    h = await startHarness('api_null_fields');
    await seedTenancy(h);
    alice = await memberToken(h, 'alice', ['vision']);
    // A node nothing runs on, for the drain (a null dryRun drains it for real: harmless there).
    await h.ok('PUT', '/v1/nodes/idle-node', { flavor: 'a100-80gb', accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 });
    expect((await h.request('PUT', '/v1/priority-classes/high', { body: { value: 1000 } })).status).toBe(201);
    // A running job, for the progress and status reports.
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'reported', replicas: 1, acceleratorsPerReplica: 8, checkpoint: { intervalSeconds: 900 } }) });
    jobId = job.body.id as string;
    expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBeLessThan(300);
    expect((await h.request('POST', `/v1/jobs/${jobId}/status`, { body: { state: 'RUNNING' } })).status).toBe(200);
    // A pending job, for the priority change (no cycle runs after it).
    pendingId = (await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'waiting' }) })).body.id as string;
  });
  afterAll(async () => {
    await h.close();
  });

  const operations = Object.entries(contract.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.requestBody?.content['application/json'] !== undefined)
      .map(([method, op]) => ({ key: `${method} ${path}`, schema: op.requestBody!.content['application/json']!.schema })),
  );

  it('every operation with a body has a valid body here, and that body is accepted', async () => {
    expect(operations.map((o) => o.key).sort()).toEqual(Object.keys(valid).sort());
    for (const { key } of operations) {
      const { path, body } = valid[key]!();
      const method = key.split(' ')[0]!.toUpperCase();
      const r = await h.request(method, path, { body });
      expect({ key, status: r.status < 300 ? 'ok' : r.body }).toEqual({ key, status: 'ok' });
    }
  });

  it.each([['an admin'], ['a member']])('%s: each field set to null gets a 2xx or a problem+json 4xx', async (who) => {
    const token = who === 'a member' ? alice : undefined;
    const failures: string[] = [];
    for (const { key, schema } of operations) {
      for (const path of fieldPaths(schema)) {
        const { path: url, body } = valid[key]!();
        const method = key.split(' ')[0]!.toUpperCase();
        const r = await h.request(method, url, { body: withNull(body, path), ...(token ? { token } : {}) });
        if (r.status >= 500 || (r.status >= 400 && !String(r.contentType).includes('application/problem+json'))) failures.push(`${key} ${path.join('.')}=null → ${r.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('in a PATCH, null restores a field\'s default (JSON merge patch); a job\'s null checkpoint is no checkpoint', async () => {
    expect((await h.request('PATCH', '/v1/teams/nlp', { body: { fairShareWeight: 7, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'Never' } } })).status).toBe(200);
    const r = await h.request('PATCH', '/v1/teams/nlp', { body: { fairShareWeight: null, preemption: { withinTeam: null } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Never' } });
    const job = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'no-ckpt', checkpoint: null }) });
    expect(job.status).toBe(201);
    expect(job.body.checkpoint).toBeNull();
  });
});
