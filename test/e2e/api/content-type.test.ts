import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { ADMIN_TOKEN, type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/** A raw HTTP request, so that the test decides every header (fetch adds text/plain to a string body). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; type: string; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: text === '' ? null : JSON.parse(text) }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('request bodies must be JSON: anything else is 415 problem+json that says what to send', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_content_type');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it("curl's default (application/x-www-form-urlencoded), text/plain and no Content-Type at all are refused with 415, nothing written", async () => {
    const before = await h.counts();
    const json = JSON.stringify(jobBody());
    const cases: [string, string, string, Record<string, string>][] = [
      ['curl -d (form)', 'POST', '/v1/jobs', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['text/plain', 'POST', '/v1/jobs', { 'content-type': 'text/plain;charset=UTF-8' }],
      ['no Content-Type', 'POST', '/v1/jobs', {}],
      ['form on PUT', 'PUT', '/v1/teams/vision', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['chunked, no Content-Type', 'PUT', '/v1/cohorts/research', { 'transfer-encoding': 'chunked' }],
    ];
    for (const [what, method, path, headers] of cases) {
      const body = path === '/v1/jobs' ? json : JSON.stringify({ cohort: null, description: 'x' });
      const r = await raw(h.url, method, path, headers, body);
      expect({ what, status: r.status }).toEqual({ what, status: 415 });
      expect(r.type).toContain('application/problem+json');
      expect(r.body).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', title: expect.any(String), errors: expect.any(Array) });
      expect(r.body.detail).toContain('Content-Type: application/json');
    }
    const form = await raw(h.url, 'POST', '/v1/jobs', { 'content-type': 'application/x-www-form-urlencoded' }, json);
    expect(form.body.detail).toMatch(/^Content-Type application\/x-www-form-urlencoded is not accepted/);
    expect(await h.counts()).toEqual(before);
    // The team kept its cohort (the form body did not replace it).
    expect((await h.request('GET', '/v1/teams/vision')).body.cohort).toBe('research');
  });

  it('JSON with parameters or a +json type is accepted, and requests without a body pass whatever their headers say', async () => {
    const created = await raw(h.url, 'POST', '/v1/jobs', { 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(jobBody({ name: 'with-charset' })));
    expect(created.status).toBe(201);
    const plusJson = await raw(h.url, 'PUT', '/v1/cohorts/spare', { 'content-type': 'application/merge-patch+json' }, JSON.stringify({ description: 'spare' }));
    expect(plusJson.status).toBe(201);
    // An empty POST (curl -X POST sends no body) and a DELETE with a stray form header are fine.
    const cycle = await raw(h.url, 'POST', '/v1/scheduler/cycles', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' });
    expect(cycle.status).toBe(200);
    const cancel = await raw(h.url, 'DELETE', `/v1/jobs/${created.body.id as string}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(cancel.status).toBe(200);
  });

  it('Content-Type: application/json with an empty body (Content-Length 0, or no body at all) is taken as no body; invalid JSON is still 400', async () => {
    const json = { 'content-type': 'application/json' };
    // Generic HTTP clients send the JSON header on every request, a DELETE included: the cancel goes through.
    for (const [what, headers] of [
      ['Content-Length: 0', { ...json, 'content-length': '0' }],
      ['no body at all', json],
    ] as const) {
      const job = await raw(h.url, 'POST', '/v1/jobs', json, JSON.stringify(jobBody({ name: `bodiless-${what.length}` })));
      expect(job.status).toBe(201);
      const cancel = await raw(h.url, 'DELETE', `/v1/jobs/${job.body.id as string}`, headers);
      expect({ what, status: cancel.status, state: cancel.body?.state }).toEqual({ what, status: 200, state: 'CANCELLED' });
    }
    // The same for a quota (an admin write), and for a POST that takes no body (curl -X POST -H 'Content-Type: application/json').
    expect((await h.request('PUT', '/v1/teams/nlp/quotas/a100-80gb', { body: { nominal: 4, borrowingLimit: null, lendingLimit: null } })).status).toBe(201);
    const quota = await raw(h.url, 'DELETE', '/v1/teams/nlp/quotas/a100-80gb', { ...json, 'content-length': '0' });
    expect(quota.status).toBe(200);
    expect(quota.body).toMatchObject({ before: { nominal: 4 }, after: null });
    expect((await h.request('GET', '/v1/teams/nlp')).body.quotas.map((q: { flavor: string }) => q.flavor)).not.toContain('a100-80gb');
    expect((await raw(h.url, 'POST', '/v1/scheduler/cycles', json)).status).toBe(200);

    // Where a body is required, an empty one is a missing one: the usual 400 naming the required fields, nothing written.
    const before = await h.counts();
    const empty = await raw(h.url, 'POST', '/v1/jobs', { ...json, 'content-length': '0' });
    expect(empty.status).toBe(400);
    expect(empty.type).toContain('application/problem+json');
    expect(empty.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(empty.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['name', 'team', 'replicas']));
    // A body that is there but not JSON is refused as before, on a DELETE too.
    for (const [method, path] of [['POST', '/v1/jobs'], ['DELETE', `/v1/jobs/00000000-0000-0000-0000-000000000000`]] as const) {
      const broken = await raw(h.url, method, path, json, '{"name": ');
      expect({ method, status: broken.status }).toEqual({ method, status: 400 });
      expect(broken.type).toContain('application/problem+json');
    }
    expect(await h.counts()).toEqual(before);
  });
});
