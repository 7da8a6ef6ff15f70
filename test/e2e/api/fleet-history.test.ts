import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { recordFleetHistory } from '#db';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';

/**
 * GET /v1/fleet/history over REST: the samples the scheduler's leader records (here the same recorder, called
 * as reconcile calls it), per flavor for everyone and per team for that team's members; bad parameters are a
 * 400 naming them.
 */
describe('GET /v1/fleet/history', () => {
  let h: Harness;
  let alice: string;
  const now = new Date();

  beforeAll(async () => {
    h = await startHarness('api_fleet_history');
    await seedTenancy(h); // vision and nlp, two h100 nodes of 8
    alice = await memberToken(h, 'alice', ['vision']);
    const nlp = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'nlp-run', team: 'nlp', replicas: 1, acceleratorsPerReplica: 8 }) });
    expect(nlp.status).toBe(201);
    expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBe(200);
    expect((await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'vision-wait', replicas: 2, acceleratorsPerReplica: 8 }) })).status).toBe(201);
    expect(await recordFleetHistory(h.pg, now)).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('an admin reads the flavor and every team, minute by minute', async () => {
    const r = await h.request('GET', '/v1/fleet/history?resolution=minute');
    expect(r.status).toBe(200);
    expect(r.body.resolution).toBe('minute');
    expect(r.body.items.map((i: { flavor: string; team: string | null; capacity: number; allocated: number; pendingAccelerators: number }) => [i.flavor, i.team, i.capacity, i.allocated, i.pendingAccelerators])).toEqual([
      ['a100-80gb', null, 0, 0, 0],
      ['h100-80gb', null, 16, 8, 16],
      ['h100-80gb', 'nlp', 16, 8, 0],
      ['h100-80gb', 'vision', 16, 0, 16],
    ]);
    const vision = r.body.items.find((i: { team: string | null }) => i.team === 'vision');
    expect(vision).toMatchObject({ pendingJobs: 1, samples: 1 });
    expect(vision.waitMaxSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(vision.at)).toBe(Math.floor(now.getTime() / 60_000) * 60_000);
    // The hour row is there too (the default resolution).
    expect((await h.request('GET', '/v1/fleet/history')).body.items).toHaveLength(4);
  });

  it('a member reads the flavor rows and their own teams; another team is a 403', async () => {
    const r = await h.request('GET', '/v1/fleet/history?resolution=minute&flavor=h100-80gb', { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: { team: string | null }) => i.team)).toEqual([null, 'vision']);
    expect((await h.request('GET', '/v1/fleet/history?team=nlp', { token: alice })).status).toBe(403);
  });

  it('bad parameters are a 400 naming them', async () => {
    for (const [query, field] of [
      ['resolution=second', 'resolution'],
      ['from=yesterday', 'from'],
      ['from=2026-12-07&to=2026-12-01', 'to'],
      ['flavor=Not_A_Flavor', 'flavor'],
    ] as const) {
      const r = await h.request('GET', `/v1/fleet/history?${query}`);
      expect({ query, status: r.status, fields: r.body.errors?.map((e: { field: string }) => e.field) }).toEqual({ query, status: 400, fields: [field] });
    }
  });
});
