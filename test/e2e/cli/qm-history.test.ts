import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordFleetHistory } from '#db';
import { ADMIN_TOKEN, type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm } from './qm-process.js';

/** `qm history`: the fleet over time as the scheduler recorded it, as a table for people and JSON for scripts. */
let h: Harness;
let dir: string;
let member: Record<string, string>;

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_history');
  await seedTenancy(h);
  dir = mkdtempSync(join(tmpdir(), 'qm-history-'));
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'config'), TZ: 'UTC' };
  expect((await h.request('POST', '/v1/jobs', { body: jobBody({ name: 'nlp-run', team: 'nlp', replicas: 1, acceleratorsPerReplica: 8 }) })).status).toBe(201);
  expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBe(200);
  await recordFleetHistory(h.pg, new Date());
});
afterAll(async () => {
  await h?.close();
});

describe('qm history', () => {
  it('an admin sees every flavor and team with what they were offered and held; -o json is the API answer', async () => {
    const admin = { ...member, QM_TOKEN: ADMIN_TOKEN };
    const r = await runQm(['history', '--resolution', 'minute', '--flavor', 'h100-80gb'], { env: admin });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^fleet by minute from /);
    expect(r.stdout).toMatch(/AT +FLAVOR +TEAM +OFFERED +HELD +HELD% +WAITING +ASKED +WAIT-P90 +WAIT-MAX/);
    expect(r.stdout).toMatch(/h100-80gb +\(all\) +16 +8 +50%/);
    expect(r.stdout).toMatch(/h100-80gb +nlp +16 +8 +50%/);
    const json = await runQm(['history', '--resolution', 'minute', '-o', 'json'], { env: admin });
    expect(JSON.parse(json.stdout)).toMatchObject({ resolution: 'minute', items: expect.arrayContaining([expect.objectContaining({ flavor: 'h100-80gb', team: 'nlp', allocated: 8 })]) });
  });

  it("a member sees the flavors and their own team, not another team's rows; a bad resolution is a usage error", async () => {
    const r = await runQm(['history', '--resolution', 'minute'], { env: member });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('vision');
    expect(r.stdout).not.toContain('nlp');
    const bad = await runQm(['history', '--resolution', 'second'], { env: member });
    expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 2, stdout: '' });
    expect(bad.stderr).toBe('qm: --resolution second: expected one of minute, hour, day\n');
  });
});
