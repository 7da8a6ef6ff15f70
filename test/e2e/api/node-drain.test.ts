// Node drain (issue #30): POST /v1/nodes/{name}/drain cordons a node and requeues every job holding accelerators
// on it through the transition writer, as a preemption does; the next cycle places them elsewhere. A dry run
// changes nothing; members are refused; `qm node drain` drives it through the real binary.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from './harness.js';
import { buildQm, runQm } from '../cli/qm-process.js';

interface JobView {
  state: string;
  allocation: { node: string }[];
}

let h: Harness;
let alice: string;
const job = async (id: string): Promise<JobView> => (await h.request('GET', `/v1/jobs/${id}`)).body as JobView;
const cycle = async (): Promise<void> => {
  expect((await h.request('POST', '/v1/scheduler/cycles')).status).toBe(200);
};

beforeAll(async () => {
  buildQm();
  h = await startHarness('api_node_drain');
  await seedTenancy(h);
  alice = await memberToken(h, 'alice', ['vision']);
});
afterAll(async () => {
  await h?.close();
});

describe('node drain', () => {
  it('cordons the node, requeues its jobs as a preemption does, and the next cycle places them on another node', async () => {
    const a = (await h.ok('POST', '/v1/jobs', jobBody({ name: 'on-one', replicas: 1, acceleratorsPerReplica: 4 }))).id as string;
    await cycle();
    const node = (await job(a)).allocation[0]!.node;
    const other = node === 'gpu-1' ? 'gpu-2' : 'gpu-1';
    await h.ok('POST', `/v1/jobs/${a}/status`, { state: 'RUNNING' });

    // A dry run lists it and changes nothing.
    const dry = await h.request('POST', `/v1/nodes/${node}/drain`, { body: { dryRun: true } });
    expect(dry.body).toEqual({ node, cordoned: true, jobs: [{ id: a, name: 'on-one', team: 'vision', from: 'RUNNING' }], dryRun: true });
    expect((await job(a)).state).toBe('RUNNING');
    expect((await h.ok('GET', `/v1/nodes/${node}`)).schedulable).toBe(true);

    // A member may not drain.
    expect((await h.request('POST', `/v1/nodes/${node}/drain`, { token: alice, body: {} })).status).toBe(403);

    const drained = await h.request('POST', `/v1/nodes/${node}/drain`, { body: {} });
    expect(drained.status).toBe(200);
    expect(drained.body).toEqual({ node, cordoned: true, jobs: [{ id: a, name: 'on-one', team: 'vision', from: 'RUNNING' }], dryRun: false });
    expect((await h.ok('GET', `/v1/nodes/${node}`)).schedulable).toBe(false);
    expect((await job(a)).state).toBe('PENDING');
    const events = (await h.ok('GET', `/v1/jobs/${a}/events`)).items as { kind: string; message: string }[];
    expect(events.find((e) => e.kind === 'job.requeued')?.message).toBe(`node ${node} drained by admin; requeued`);
    const outbox = await h.pg.query<{ kind: string }>(`SELECT kind FROM outbox WHERE payload ->> 'jobId' = $1 ORDER BY id`, [a]);
    expect(outbox.rows.map((r) => r.kind)).toEqual(expect.arrayContaining(['evict']));

    await cycle();
    const placed = await job(a);
    expect(placed.state).toBe('ADMITTED');
    expect(placed.allocation.map((p) => p.node)).toEqual([other]);

    // Draining it again: cordoned already, nothing left on it.
    expect((await h.request('POST', `/v1/nodes/${node}/drain`, { body: {} })).body).toEqual({ node, cordoned: false, jobs: [], dryRun: false });
    await h.ok('DELETE', `/v1/jobs/${a}`);
  });

  it('answers 404 for an unknown node and 400 for a bad dryRun, changing nothing', async () => {
    expect((await h.request('POST', '/v1/nodes/nope/drain', { body: {} })).status).toBe(404);
    const bad = await h.request('POST', '/v1/nodes/gpu-2/drain', { body: { dryRun: 'yes' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('dryRun');
    expect((await h.ok('GET', '/v1/nodes/gpu-2')).schedulable).toBe(true);
  });

  it('qm node drain, with --dry-run first', async () => {
    const env = { QM_SERVER: h.url, QM_TOKEN: 'e2e-admin-token-0123456789abcdef', XDG_CONFIG_HOME: join(mkdtempSync(join(tmpdir(), 'qm-drain-')), 'config') };
    const id = (await h.ok('POST', '/v1/jobs', jobBody({ name: 'cli-drain', replicas: 1, acceleratorsPerReplica: 4 }))).id as string;
    await cycle();
    expect((await job(id)).allocation[0]!.node).toBe('gpu-2');
    const dry = await runQm(['node', 'drain', 'gpu-2', '--dry-run'], { env });
    expect({ code: dry.code, stdout: dry.stdout }).toEqual({ code: 0, stdout: `${id} vision/cli-drain: would be requeued (was ADMITTED)\n` });
    expect(dry.stderr).toBe('qm: node gpu-2 would be cordoned; 1 job(s) would be requeued (dry run: nothing changed)\n');
    const done = await runQm(['node', 'drain', 'gpu-2'], { env });
    expect(done.stdout).toBe(`${id} vision/cli-drain: requeued (was ADMITTED)\n`);
    expect(done.stderr).toBe('qm: node gpu-2 cordoned; 1 job(s) requeued\n');
    expect((await job(id)).state).toBe('PENDING');
    const member = await runQm(['node', 'drain', 'gpu-2'], { env: { ...env, QM_TOKEN: alice } });
    expect(member.code).toBe(1);
  });
});
