import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm } from './qm-process.js';

/**
 * `qm` finds a job by name however many jobs came after it: the API filters by name (`GET /v1/jobs?name=`).
 * Before, `qm` scanned the 500 newest jobs, so a name stopped resolving after 500 more submissions.
 */
let h: Harness;
let env: Record<string, string>;

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_names');
  await seedTenancy(h);
  const dir = mkdtempSync(join(tmpdir(), 'qm-names-'));
  env = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'config') };
});
afterAll(async () => {
  await h?.close();
});

describe('job names', () => {
  it('a job submitted before 520 others is still found by name (qm why, qm describe)', async () => {
    const first = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'the-first' }) });
    expect(first.status).toBe(201);
    for (let i = 0; i < 520; i += 40) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(40, 520 - i) }, (_, k) => h.request('POST', '/v1/jobs', { body: jobBody({ name: `later-${i + k}` }) })),
      );
      expect(batch.every((r) => r.status === 201)).toBe(true);
    }
    const why = await runQm(['why', 'the-first'], { env });
    expect({ code: why.code, stderr: why.stderr }).toEqual({ code: 0, stderr: '' });
    expect(why.stdout).toContain(first.body.id);
    const describe = await runQm(['describe', 'the-first'], { env });
    expect(describe.code).toBe(0);
    expect(describe.stdout).toContain('the-first');
  });

  it('GET /v1/jobs?name= lists only that name, within the caller’s teams', async () => {
    await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'shared-name', team: 'nlp' }) });
    const mine = await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'shared-name' }) });
    const asAlice = await h.request('GET', '/v1/jobs?name=shared-name', { token: env.QM_TOKEN! });
    expect(asAlice.body.items.map((j: { id: string }) => j.id)).toEqual([mine.body.id]);
    const asAdmin = await h.request('GET', '/v1/jobs?name=shared-name');
    expect(asAdmin.body.items).toHaveLength(2);
    const bad = await h.request('GET', '/v1/jobs?name=Not_A_Name');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['name']);
    const unknown = await runQm(['why', 'no-such-job'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no job named no-such-job');
  });
});
