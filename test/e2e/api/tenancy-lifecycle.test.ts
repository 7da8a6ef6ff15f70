import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { OutboxRelay, PgOutboxStore, redisConnection, SideEffectHandlerRegistry, SideEffectQueue, SideEffectWorker, standaloneHandlers } from '#scheduling';
import { type Harness, jobBody, seedTenancy, startHarness } from './harness.js';

const fields = (body: { errors: { field: string }[] }): string[] => body.errors.map((e) => e.field).sort();

/**
 * Teams change by PATCH (merge) or a full PUT, never by losing settings silently; nodes, teams and cohorts
 * can be deleted once nothing uses them (409 naming what does), so a flavor that once had nodes can go too.
 */
describe('tenancy lifecycle: PATCH and full PUT of teams; DELETE of nodes, teams, cohorts and flavors', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('api_tenancy_lifecycle');
    await seedTenancy(h);
  });
  afterAll(async () => {
    await h.close();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await h.request(method, path, body === undefined ? {} : { body });
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  /** Carries out the outbox's side effects as the worker does (standalone handlers, real BullMQ and Redis). */
  async function runSideEffects(): Promise<void> {
    const settings = { connection: redisConnection(h.redisUrl), prefix: `${h.redisPrefix}-fx-${randomBytes(3).toString('hex')}`, attempts: 3, backoffMs: 10 };
    const logger = pino({ level: 'silent' });
    const queue = new SideEffectQueue(settings);
    const worker = new SideEffectWorker(new PgOutboxStore(h.pg), SideEffectHandlerRegistry.create(standaloneHandlers()), settings, { concurrency: 4, slowRetryBaseMs: 50, slowRetryMaxMs: 100 }, logger);
    worker.start();
    try {
      await new OutboxRelay(new PgOutboxStore(h.pg), queue, logger, 100).enqueueAllDue(new Date());
      for (let i = 0; ; i++) {
        const { rows } = await h.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE status <> 'done'`);
        if (rows[0]!.n === 0) return;
        if (i > 600) throw new Error(`${rows[0]!.n} outbox entries never done`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await worker.close();
      await queue.close();
    }
  }

  describe('teams: PUT replaces the whole team, PATCH merges', () => {
    it('a partial PUT of an existing team is 400 naming every missing field, and changes nothing', async () => {
      await ok('PATCH', '/v1/teams/vision', { fairShareWeight: 3, preemption: { withinTeam: 'Never' } });
      const before = await h.counts();
      const r = await h.request('PUT', '/v1/teams/vision', { body: { fairShareWeight: 2 } });
      expect(r.status).toBe(400);
      expect(r.contentType).toContain('application/problem+json');
      expect(fields(r.body)).toEqual(['cohort', 'preemption.reclaimWithinCohort', 'preemption.withinTeam']);
      expect(r.body.detail).toBe('PUT replaces team vision as a whole: send cohort, preemption.withinTeam, preemption.reclaimWithinCohort too, or change only some fields with PATCH /v1/teams/vision');
      expect(await h.counts()).toEqual(before);
      // The team kept its cohort and preemption policy (before the fix it fell out of its cohort, silently).
      expect(await ok('GET', '/v1/teams/vision')).toMatchObject({ cohort: 'research', fairShareWeight: 3, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'Any' } });
    });

    it('a full PUT replaces (200); a PUT of a new team takes defaults for what it leaves out (201)', async () => {
      const full = await h.request('PUT', '/v1/teams/vision', { body: { cohort: 'research', fairShareWeight: 2, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' } } });
      expect(full.status).toBe(200);
      expect(full.body).toMatchObject({ cohort: 'research', fairShareWeight: 2, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' } });
      const created = await h.request('PUT', '/v1/teams/speech', { body: { cohort: 'research' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } });
    });

    it('PATCH changes only what it is sent, nested preemption fields too; cohort null leaves the cohort', async () => {
      const r = await h.request('PATCH', '/v1/teams/speech', { body: { preemption: { reclaimWithinCohort: 'Never' } } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: 'speech', cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Never' } });
      expect((await h.request('PATCH', '/v1/teams/speech', { body: { fairShareWeight: 5 } })).body).toMatchObject({ cohort: 'research', fairShareWeight: 5, preemption: { reclaimWithinCohort: 'Never' } });
      expect((await h.request('PATCH', '/v1/teams/speech', { body: { cohort: null } })).body).toMatchObject({ cohort: null, fairShareWeight: 5 });
      // application/merge-patch+json is JSON too.
      const merge = await h.request('PATCH', '/v1/teams/speech', { raw: JSON.stringify({ cohort: 'research' }), headers: { 'content-type': 'application/merge-patch+json' } });
      expect(merge).toMatchObject({ status: 200, body: { cohort: 'research', fairShareWeight: 5 } });
    });

    it('PATCH refuses bad fields (400), an unknown cohort (422), an unknown team (404) and members (403), changing nothing', async () => {
      const before = await h.counts();
      const bad = await h.request('PATCH', '/v1/teams/speech', { body: { fairShareWeight: 0, preemption: { withinTeam: 'Always' }, colour: 'red' } });
      expect(bad.status).toBe(400);
      expect(fields(bad.body)).toEqual(['colour', 'fairShareWeight', 'preemption.withinTeam']);
      const ghost = await h.request('PATCH', '/v1/teams/speech', { body: { cohort: 'ghost' } });
      expect(ghost.status).toBe(422);
      expect(ghost.body.errors).toEqual([{ field: 'cohort', message: 'unknown cohort: ghost' }]);
      expect((await h.request('PATCH', '/v1/teams/nobody', { body: { fairShareWeight: 2 } })).status).toBe(404);
      const alice = (await ok('POST', '/v1/tokens', { subject: 'alice', role: 'member', teams: ['speech'] })).token as string;
      expect((await h.request('PATCH', '/v1/teams/speech', { body: { fairShareWeight: 2 }, token: alice })).status).toBe(403);
      expect((await h.request('DELETE', '/v1/teams/speech', { token: alice })).status).toBe(403);
      const after = await h.counts();
      // Nothing but alice's token and its token.created audit event.
      expect({ ...after, api_tokens: after.api_tokens! - 1, events: after.events! - 1 }).toEqual(before);
      expect(await ok('GET', '/v1/teams/speech')).toMatchObject({ cohort: 'research', fairShareWeight: 5 });
    });
  });

  describe('DELETE: 409 naming what still uses it, 204 once nothing does', () => {
    it('a flavor that had nodes, a quota, a budget and a job that ran goes away once each is removed, in order', async () => {
      await ok('PUT', '/v1/cohorts/retired', { description: 'old pool' });
      await ok('PUT', '/v1/flavors/v100', { kind: 'nvidia-gpu', costPerHour: 1 });
      await ok('PUT', '/v1/teams/legacy', { cohort: 'retired' });
      await ok('PUT', '/v1/teams/legacy/quotas/v100', { nominal: 8 });
      await ok('PUT', '/v1/teams/legacy/budgets/month', { limit: 1000, unit: 'accelerator-hours', onExhausted: 'warn' });
      await ok('PUT', '/v1/nodes/v100-1', { flavor: 'v100', accelerators: 8, cpuMillis: 64000, memoryMiB: 262144, topology: { zone: 'z9' } });
      const onlyLegacy = (await ok('POST', '/v1/tokens', { subject: 'old-timer', role: 'member', teams: ['legacy'] })).token as string;
      const alsoVision = (await ok('POST', '/v1/tokens', { subject: 'both', role: 'member', teams: ['legacy', 'vision'] })).token as string;
      const job = await ok('POST', '/v1/jobs', jobBody({ name: 'old-run', team: 'legacy', replicas: 1, acceleratorsPerReplica: 8, flavors: ['v100'] }));
      await ok('POST', '/v1/scheduler/cycles');
      await ok('POST', `/v1/jobs/${job.id as string}/status`, { state: 'RUNNING' });

      const before = await h.counts();
      const node = await h.request('DELETE', '/v1/nodes/v100-1');
      expect(node.status).toBe(409);
      expect(node.contentType).toContain('application/problem+json');
      expect(node.body.code).toBe('IN_USE');
      expect(node.body.detail).toContain(`node v100-1 holds accelerators of 1 job(s): legacy/old-run (${job.id as string})`);
      const team = await h.request('DELETE', '/v1/teams/legacy');
      expect(team.status).toBe(409);
      expect(team.body.detail).toMatch(/^team legacy is still used by 1 unfinished job\(s\) .*; quota\(s\) for v100 .*; budget\(s\) for the month period .*: remove those first$/);
      const cohort = await h.request('DELETE', '/v1/cohorts/retired');
      expect(cohort.status).toBe(409);
      expect(cohort.body.detail).toMatch(/^cohort retired still has member team\(s\) legacy: move them out first/);
      const flavor = await h.request('DELETE', '/v1/flavors/v100');
      expect(flavor.status).toBe(409);
      expect(await h.counts()).toEqual(before);

      // The job ends; its pods' clean-up is still to be carried out: the team waits for it.
      await ok('POST', `/v1/jobs/${job.id as string}/status`, { state: 'SUCCEEDED' });
      await ok('DELETE', '/v1/teams/legacy/quotas/v100');
      await ok('DELETE', '/v1/teams/legacy/budgets/month');
      const cleanup = await h.request('DELETE', '/v1/teams/legacy');
      expect(cleanup.status).toBe(409);
      expect(cleanup.body.detail).toMatch(/^team legacy is still used by 2 side effect\(s\) of its jobs still being carried out \(retry shortly\)/);
      await runSideEffects();

      // Now: node, team (with its finished job), cohort, flavor — each 204, then 404.
      expect((await h.request('DELETE', '/v1/nodes/v100-1')).status).toBe(204);
      expect((await h.request('DELETE', '/v1/teams/legacy')).status).toBe(204);
      expect((await h.request('DELETE', '/v1/cohorts/retired')).status).toBe(204);
      expect((await h.request('DELETE', '/v1/flavors/v100')).status).toBe(204);
      for (const path of ['/v1/nodes/v100-1', '/v1/teams/legacy', '/v1/cohorts/retired', '/v1/flavors/v100']) {
        expect({ path, get: (await h.request('GET', path)).status, del: (await h.request('DELETE', path)).status }).toEqual({ path, get: 404, del: 404 });
      }
      expect((await h.request('GET', `/v1/jobs/${job.id as string}`)).status).toBe(404);
      // Tokens lose the team, so a later team of the same name is not theirs; one left without a team is revoked.
      expect((await h.request('GET', '/v1/whoami', { token: onlyLegacy })).status).toBe(401);
      expect((await h.request('GET', '/v1/whoami', { token: alsoVision })).body).toMatchObject({ subject: 'both', teams: ['vision'] });
      await ok('PUT', '/v1/teams/legacy', {});
      expect((await h.request('GET', '/v1/jobs?team=legacy', { token: alsoVision })).status).toBe(403);
      expect((await h.request('DELETE', '/v1/teams/legacy')).status).toBe(204);
      // The usage ledger keeps what the team used, and each deletion is an event with who did it.
      const usage = await ok('GET', '/v1/usage?groupBy=team');
      expect(usage.items.map((i: { team: string }) => i.team)).toContain('legacy');
      const { rows } = await h.pg.query<{ kind: string; actor: string }>(`SELECT kind, actor FROM events WHERE kind LIKE '%.deleted' AND kind NOT LIKE 'quota.%' AND kind NOT LIKE 'budget.%' ORDER BY id`);
      // The audit trail (GET /v1/audit, qm audit) lists them next to quota and budget changes.
      const audit = await ok('GET', '/v1/audit?limit=20');
      expect(audit.items.filter((e: { kind: string }) => e.kind.endsWith('.deleted')).map((e: { kind: string; team: string | null }) => [e.kind, e.team])).toEqual([
        ['team.deleted', 'legacy'],
        ['flavor.deleted', null],
        ['cohort.deleted', null],
        ['team.deleted', 'legacy'],
        ['node.deleted', null],
        ['budget.deleted', 'legacy'],
        ['quota.deleted', 'legacy'],
      ]);
      expect(rows).toEqual([
        { kind: 'node.deleted', actor: 'admin' },
        { kind: 'team.deleted', actor: 'admin' },
        { kind: 'cohort.deleted', actor: 'admin' },
        { kind: 'flavor.deleted', actor: 'admin' },
        { kind: 'team.deleted', actor: 'admin' },
      ]);
    });

    it('a team deleted while jobs are being submitted to it: each submission lands before (delete 409) or is refused (422); none is lost, nothing answers 5xx', async () => {
      for (let round = 0; round < 8; round++) {
        await ok('PUT', '/v1/teams/racy', {});
        // Submissions spread over a few milliseconds around the delete, so some land in its transaction.
        const deleting = h.request('DELETE', '/v1/teams/racy');
        const submissions = Array.from({ length: 12 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, round * 2 + i));
          return h.request('POST', '/v1/jobs', { body: jobBody({ name: `racy-${round}-${i}`, team: 'racy', flavors: ['h100-80gb'] }) });
        });
        const [deleted, ...posted] = await Promise.all([deleting, ...submissions]);
        expect([204, 409]).toContain(deleted.status);
        for (const r of posted) expect({ status: r.status, code: r.body?.code }).toEqual(r.status === 201 ? { status: 201, code: undefined } : { status: 422, code: 'UNKNOWN_REFERENCE' });
        const accepted = posted.filter((r) => r.status === 201).map((r) => r.body.id as string);
        // Every accepted job is still there (a PENDING job is never deleted with its team)…
        for (const id of accepted) expect({ id, status: (await h.request('GET', `/v1/jobs/${id}`)).status }).toEqual({ id, status: 200 });
        // …so a team that went had none, and one that stayed is refused while they wait.
        if (deleted.status === 204) expect(accepted).toEqual([]);
        else {
          expect(deleted.body.detail).toMatch(/unfinished job\(s\)/);
          for (const id of accepted) await ok('DELETE', `/v1/jobs/${id}`);
          expect((await h.request('DELETE', '/v1/teams/racy')).status).toBe(204);
        }
      }
    });

    it('a cohort without members and a node without work go at once; bad names are 400', async () => {
      await ok('PUT', '/v1/cohorts/empty', { description: '' });
      expect((await h.request('DELETE', '/v1/cohorts/empty')).status).toBe(204);
      await ok('PUT', '/v1/nodes/spare-1', { flavor: 'h100-80gb', accelerators: 8, cpuMillis: 64000, memoryMiB: 262144, topology: {} });
      expect((await h.request('DELETE', '/v1/nodes/spare-1')).status).toBe(204);
      for (const path of ['/v1/cohorts/Bad_Name', '/v1/teams/-x', '/v1/nodes/UPPER']) expect({ path, status: (await h.request('DELETE', path)).status }).toEqual({ path, status: 400 });
    });
  });
});
