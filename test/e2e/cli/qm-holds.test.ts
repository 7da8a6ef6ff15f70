import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm } from './qm-process.js';

/**
 * `qm hold` and `qm release` (Slurm's scontrol hold / release) through the real `qm` against the real API: by
 * name or by filter, a dry run, an admin's hold a member cannot release, usage errors exit 2.
 */
let h: Harness;
let member: Record<string, string>;
let admin: Record<string, string>;

const submit = async (name: string): Promise<string> => (await h.ok('POST', '/v1/jobs', jobBody({ name, replicas: 1, acceleratorsPerReplica: 64 }))).id as string;
const holdOf = async (id: string) => (await h.ok('GET', `/v1/jobs/${id}`)).hold as { by: string; byAdmin: boolean } | null;

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_holds');
  await seedTenancy(h);
  const dir = mkdtempSync(join(tmpdir(), 'qm-holds-'));
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'member'), QM_TEAM: 'vision' };
  admin = { QM_SERVER: h.url, QM_TOKEN: 'e2e-admin-token-0123456789abcdef', XDG_CONFIG_HOME: join(dir, 'admin') };
});
afterAll(async () => {
  await h?.close();
});

describe('qm hold / qm release', () => {
  it('holds and releases a job by name; again is a no-op that says so', async () => {
    const id = await submit('tune-1');
    const held = await runQm(['hold', 'tune-1', '--team', 'vision'], { env: member });
    expect({ code: held.code, stdout: held.stdout }).toEqual({ code: 0, stdout: `${id} vision/tune-1: held\n` });
    expect(await holdOf(id)).toMatchObject({ by: 'alice', byAdmin: false });
    expect((await runQm(['hold', `job/tune-1`, '--team', 'vision'], { env: member })).stdout).toBe(`${id} vision/tune-1: already held\n`);
    const why = await runQm(['describe', id], { env: member });
    expect(why.stdout).toContain('held by alice');
    expect((await runQm(['release', id], { env: member })).stdout).toBe(`${id} vision/tune-1: released\n`);
    expect(await holdOf(id)).toBeNull();
    expect((await runQm(['release', id], { env: member })).stdout).toBe(`${id} vision/tune-1: already not held\n`);
  });

  it('holds a team’s jobs by filter, with a dry run first', async () => {
    const ids = [await submit('grid'), await submit('grid')];
    const dry = await runQm(['hold', '--name', 'grid', '--dry-run'], { env: member });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(ids.map((id) => `${id} vision/grid: would be held\n`).join(''));
    expect(dry.stderr).toBe('qm: dry run: 2 job(s) of team vision would be held\n');
    expect(await holdOf(ids[0]!)).toBeNull();
    const done = await runQm(['hold', '--name', 'grid'], { env: member });
    expect(done.stderr).toBe('qm: held 2 job(s) of team vision\n');
    for (const id of ids) expect(await holdOf(id)).not.toBeNull();
    expect((await runQm(['release', '--name', 'grid', '--user', 'admin'], { env: member })).stderr).toBe('qm: released 2 job(s) of team vision\n');
    for (const id of ids) expect(await holdOf(id)).toBeNull();
  });

  it('refuses a member the release of an admin’s hold (exit 1, the API’s reason)', async () => {
    const id = await submit('frozen');
    expect((await runQm(['hold', id], { env: admin })).code).toBe(0);
    const refused = await runQm(['release', id], { env: member });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('only an admin releases it');
    expect(await holdOf(id)).toMatchObject({ byAdmin: true });
  });

  it.each([
    [['hold'], 'qm: name the jobs to hold, or a filter: --name, --user (with --team)\n'],
    [['release', 'x', '--name', 'y'], 'qm: give jobs to release or a filter (--name, --user), not both\n'],
    [['hold', 'x', '--dry-run'], 'qm: --dry-run goes with a filter (--name, --user)\n'],
  ])('exits 2 for %j', async (args, message) => {
    const r = await runQm(args, { env: member });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: message });
  });
});
