import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

/** `place`'s body with JSON text nested `depth` deep (arrays or objects) where it says "__DEEP__". */
function nested(place: (d: unknown) => unknown, depth: number, kind: 'arrays' | 'objects'): string {
  const inner = kind === 'arrays' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  return JSON.stringify(place('__DEEP__')).replace('"__DEEP__"', inner);
}

describe('hostile input never answers 5xx', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_hostile');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const expectProblem = (r: { status: number; contentType: string }, status: number): void => {
    expect({ status: r.status, contentType: r.contentType }).toEqual({ status, contentType: expect.stringContaining('application/problem+json') });
  };

  it.each([
    ['template.env', (d: unknown) => jobBody({ template: { image: 'x', env: d } })],
    ['name', (d: unknown) => jobBody({ name: d })],
    ['extra', (d: unknown) => ({ ...jobBody(), extra: d })],
  ])('JSON nested 10,000 deep in %s is a 400 naming the limit, with nothing written', async (_, place) => {
    const before = await h.counts();
    for (const kind of ['arrays', 'objects'] as const) {
      const r = await h.request('POST', '/v1/jobs', { raw: nested(place, 10_000, kind) });
      expectProblem(r, 400);
      expect(r.body.errors).toEqual([{ field: '(body)', message: 'nests deeper than 64 levels of arrays and objects' }]);
    }
    // Within the limit it is an ordinary validation error of the field.
    const shallow = await h.request('POST', '/v1/jobs', { raw: nested(place, 20, 'objects') });
    expectProblem(shallow, 400);
    expect(await h.counts()).toEqual(before);
  });

  it('a cursor out of range is a 400 naming cursor', async () => {
    for (const date of ['-005000-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify([date, '00000000-0000-0000-0000-000000000000'])).toString('base64url');
      const r = await h.request('GET', `/v1/jobs?cursor=${cursor}`);
      expectProblem(r, 400);
    }
  });

  it('router-level errors are problem+json: long path parameter, bad percent-encoding, unknown route, wrong method, oversized body', async () => {
    expectProblem(await h.request('GET', `/v1/jobs/${'a'.repeat(5000)}`), 414);
    expectProblem(await h.request('GET', '/v1/teams/%ff'), 400);
    expectProblem(await h.request('GET', '/v1/nope'), 404);
    expectProblem(await h.request('PATCH', '/v1/jobs'), 404);
    expectProblem(await h.request('POST', '/v1/jobs', { raw: `{"name":"${'x'.repeat(2_000_000)}"}` }), 413);
  });

  it("what Node's HTTP parser refuses is problem+json too: a URL or headers over 16 KiB (431), a request that is not HTTP (400)", async () => {
    const longUrl = await h.request('GET', `/v1/jobs/${'a'.repeat(200_000)}`);
    expectProblem(longUrl, 431);
    expect(longUrl.body.code).toBe('HEADERS_TOO_LARGE');
    expectProblem(await h.request('GET', '/v1/jobs', { headers: { 'x-padding': 'p'.repeat(20_000) } }), 431);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(h.url).port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, code: 'MALFORMED_REQUEST' });
  });
});

describe('races on one object', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_races');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('20 concurrent PUTs creating one quota: exactly one 201, and the audit trail chains every change with its true before/after', async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.request('PUT', '/v1/teams/nlp/quotas/a100-80gb', { body: { nominal: i + 1, borrowingLimit: null, lendingLimit: null } })),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(19);
    const { rows } = await h.pg.query<{ kind: string; data: { before: { nominal: number } | null; after: { nominal: number } } }>(
      `SELECT kind, data FROM events WHERE kind LIKE 'quota.%' AND team = 'nlp' AND data->>'flavor' = 'a100-80gb' ORDER BY id`,
    );
    expect(rows.map((r) => r.kind)).toEqual(['quota.created', ...Array<string>(19).fill('quota.updated')]);
    expect(rows[0]!.data.before).toBeNull();
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.data.before?.nominal).toBe(rows[i - 1]!.data.after.nominal);
  });

  it('20 concurrent PUTs creating one budget: exactly one 201 and budget.created, every later change with its true before', async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.request('PUT', '/v1/teams/nlp/budgets/month', { body: { limit: i + 1, unit: 'accelerator-hours', onExhausted: 'warn' } })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([...Array<number>(19).fill(200), 201].sort());
    const { rows } = await h.pg.query<{ kind: string; data: { before: { limit: number } | null; after: { limit: number } } }>(
      `SELECT kind, data FROM events WHERE kind LIKE 'budget.%' AND team = 'nlp' ORDER BY id`,
    );
    expect(rows.map((r) => r.kind)).toEqual(['budget.created', ...Array<string>(19).fill('budget.updated')]);
    expect(rows[0]!.data.before).toBeNull();
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.data.before?.limit).toBe(rows[i - 1]!.data.after.limit);
  });

  /** The audit events of one object, oldest first. */
  async function auditOf(object: string, name: string): Promise<{ kind: string; actor: string; data: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } }[]> {
    const { rows } = await h.pg.query<{ kind: string; actor: string; data: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } }>(
      `SELECT kind, actor, data FROM events WHERE kind LIKE $1 AND data->>$2 = $3 ORDER BY id`,
      [`${object}.%`, object, name],
    );
    return rows;
  }

  it.each([
    ['flavor', '/v1/flavors/race', (i: number) => ({ kind: 'nvidia-gpu', costPerHour: i }), 'costPerHour'],
    ['cohort', '/v1/cohorts/race', (i: number) => ({ description: `take ${i}` }), 'description'],
    ['team', '/v1/teams/race', (i: number) => ({ cohort: 'research', fairShareWeight: i + 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } }), 'fairShareWeight'],
    ['node', '/v1/nodes/race', (i: number) => ({ flavor: 'h100-80gb', accelerators: i + 1, cpuMillis: 1000, memoryMiB: 1000 }), 'accelerators'],
  ])('20 concurrent PUTs creating one %s: exactly one 201 and one .created, and the audit trail chains every change with its true before/after', async (object, path, body, field) => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => h.request('PUT', path, { body: body(i) })));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array<number>(19).fill(200), 201].sort());
    const events = await auditOf(object, 'race');
    expect(events.map((e) => e.kind)).toEqual([`${object}.created`, ...Array<string>(19).fill(`${object}.updated`)]);
    expect(events[0]!.data.before).toBeNull();
    for (let i = 1; i < events.length; i++) expect({ i, before: events[i]!.data.before?.[field] }).toEqual({ i, before: events[i - 1]!.data.after?.[field] });
    // The last change's after is what the object is now; every change is the admin's.
    expect((await h.request('GET', path)).body[field]).toEqual(events.at(-1)!.data.after?.[field]);
    expect(new Set(events.map((e) => e.actor))).toEqual(new Set([events[0]!.actor]));
    // And the audit trail lists them (admins: flavors, cohorts and nodes carry no team).
    const audit = await h.request('GET', '/v1/audit?limit=100');
    expect(audit.body.items.filter((e: { kind: string }) => e.kind.startsWith(`${object}.`)).length).toBeGreaterThanOrEqual(20);
  });

  it('20 concurrent PATCHes of one team: each is audited as team.updated with its true before, and none is lost', async () => {
    await h.request('PUT', '/v1/teams/patched', { body: { fairShareWeight: 1 } });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.request('PATCH', '/v1/teams/patched', { body: i % 2 === 0 ? { fairShareWeight: i + 2 } : { cohort: i % 4 === 1 ? 'research' : null } })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array<number>(20).fill(200));
    const events = await auditOf('team', 'patched');
    expect(events.map((e) => e.kind)).toEqual(['team.created', ...Array<string>(20).fill('team.updated')]);
    for (let i = 1; i < events.length; i++) expect({ i, before: events[i]!.data.before }).toEqual({ i, before: events[i - 1]!.data.after });
    const now = (await h.request('GET', '/v1/teams/patched')).body;
    expect({ cohort: now.cohort, fairShareWeight: now.fairShareWeight }).toEqual({ cohort: events.at(-1)!.data.after?.['cohort'], fairShareWeight: events.at(-1)!.data.after?.['fairShareWeight'] });
  });

  it('a flavor deleted is audited with what it was', async () => {
    await h.request('PUT', '/v1/flavors/short-lived', { body: { kind: 'nvidia-gpu', costPerHour: 3 } });
    expect((await h.request('DELETE', '/v1/flavors/short-lived')).status).toBe(204);
    const events = await auditOf('flavor', 'short-lived');
    expect(events.map((e) => [e.kind, e.data.before?.['costPerHour'] ?? null, e.data.after?.['costPerHour'] ?? null])).toEqual([
      ['flavor.created', null, 3],
      ['flavor.deleted', 3, null],
    ]);
  });
});
