import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/** A valid job with some fields (also nested) replaced by arbitrary JSON, or extra fields added. */
const nearlyValidJob = fc
  .record({
    replace: fc.dictionary(
      fc.constantFrom('name', 'team', 'kind', 'priority', 'preemptible', 'replicas', 'minReplicas', 'acceleratorsPerReplica', 'flavors', 'flavorSelection', 'speeds', 'topology', 'expectedRuntimeSeconds', 'template', 'extra'),
      fc.jsonValue(),
      { maxKeys: 4 },
    ),
    template: fc.dictionary(
      fc.constantFrom('image', 'command', 'args', 'env', 'cpuMillis', 'memoryMiB', 'other'),
      fc.oneof(fc.jsonValue(), fc.string({ unit: 'binary' }), fc.array(fc.string({ unit: 'binary' })), fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }))),
      { maxKeys: 3 },
    ),
  })
  .map(({ replace, template }) => {
    const base = jobBody();
    return { ...base, template: { ...(base.template as object), ...template }, ...replace };
  });

const anyBody = fc.oneof(fc.jsonValue(), nearlyValidJob, fc.dictionary(fc.string(), fc.jsonValue()));

const quotaBody = fc.oneof(
  fc.jsonValue(),
  fc.record({ nominal: fc.jsonValue(), borrowingLimit: fc.jsonValue(), lendingLimit: fc.jsonValue() }, { requiredKeys: [] }),
  fc.record({ nominal: fc.integer(), borrowingLimit: fc.option(fc.integer()), lendingLimit: fc.option(fc.double()) }, { requiredKeys: ['nominal'] }),
);

describe('fuzz: random JSON never gets a 5xx', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_fuzz');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('POST /v1/jobs answers 201 or a problem+json 4xx, and stores exactly the 201s', async () => {
    let created = 0;
    const before = (await h.counts()).jobs!;
    await fc.assert(
      fc.asyncProperty(anyBody, fc.option(fc.string({ minLength: 0, maxLength: 300 })), async (body, key) => {
        const headers: Record<string, string> = {};
        if (key !== null && /^[\x20-\x7e]*$/.test(key) && key.trim() === key && key !== '') headers['idempotency-key'] = key;
        const r = await h.request('POST', '/v1/jobs', { body, headers });
        expect(r.status).toBeLessThan(500);
        if (r.status === 201) created++;
        else if (r.status !== 200) expect(r.contentType).toContain('application/problem+json');
      }),
      { numRuns: 300 },
    );
    expect((await h.counts()).jobs).toBe(before + created);
  });

  it('PUT /v1/teams/{team}/quotas/{flavor} answers 2xx or a problem+json 4xx', async () => {
    const paths = ['/v1/teams/vision/quotas/h100-80gb', '/v1/teams/vision/quotas/a100-80gb', '/v1/teams/ghost/quotas/h100-80gb', '/v1/teams/Vision/quotas/x'];
    await fc.assert(
      fc.asyncProperty(quotaBody, fc.constantFrom(...paths), async (body, path) => {
        const r = await h.request('PUT', path, { body });
        expect(r.status).toBeLessThan(500);
        if (r.status >= 400) expect(r.contentType).toContain('application/problem+json');
      }),
      { numRuns: 300 },
    );
  });

  it('strings with U+0000 (which Postgres cannot store) are a 400, not a 500', async () => {
    const before = await h.counts();
    const r = await h.request('POST', '/v1/jobs', { body: jobBody({ template: { image: 'a\u0000b', env: { K: '\u0000' } } }) });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['template.image', 'template.env.K']);
    expect((await h.request('PUT', '/v1/cohorts/research', { body: { description: '\u0000' } })).status).toBe(400);
    expect((await h.request('POST', '/v1/tokens', { body: { subject: 'x\u0000', role: 'admin' } })).status).toBe(400);
    expect(await h.counts()).toEqual(before);
  });

  it('lone UTF-16 surrogates in strings are stored or refused, never a 500', async () => {
    for (const s of ['\ud800', 'a\udfffb', '\udbff\udbff']) {
      const r = await h.request('POST', '/v1/jobs', { raw: JSON.stringify(jobBody({ template: { image: s, env: { K: s } } })), headers: { 'content-type': 'application/json' } });
      expect(r.status).toBeLessThan(500);
    }
  });

  it('raw byte soup as a body never gets a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const r = await h.request('POST', '/v1/jobs', { raw, headers: { 'content-type': 'application/json' } });
        expect(r.status).toBeLessThan(500);
      }),
      { numRuns: 200 },
    );
  });
});
