import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm } from './qm-process.js';

/**
 * What the scheduler keeps about a job reaches its owner as text, not only in `-o json`: its checkpointing and
 * progress in `qm describe`, the reason a job FAILED (or was cancelled) in `qm why`.
 */
let h: Harness;
let env: Record<string, string>;

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_progress');
  await seedTenancy(h);
  const dir = mkdtempSync(join(tmpdir(), 'qm-progress-'));
  env = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'config'), TZ: 'UTC' };
});
afterAll(async () => {
  await h?.close();
});

const ok = (method: string, path: string, body?: unknown) => h.ok(method, path, body);

describe('qm shows progress and failure reasons in words', () => {
  it('qm describe: checkpoint policy, progress at the last checkpoint and the work left; qm why: why it failed', async () => {
    const job = await ok('POST', '/v1/jobs', jobBody({ name: 'ckpt-run', replicas: 1, acceleratorsPerReplica: 8, expectedRuntimeSeconds: 7200, checkpoint: { intervalSeconds: 1800, gracePeriodSeconds: 60 } }));
    const before = await runQm(['describe', 'ckpt-run'], { env });
    expect(before.stdout).toMatch(/Checkpoint: +every 30 min, 60 s to checkpoint when evicted/);
    expect(before.stdout).not.toContain('Progress:');

    await ok('POST', '/v1/scheduler/cycles');
    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'RUNNING' });
    await ok('POST', `/v1/jobs/${job.id}/progress`, { lastCheckpointAt: new Date(Date.now() - 5 * 60_000).toISOString(), completedFraction: 0.4 });
    const running = await runQm(['describe', 'ckpt-run'], { env });
    expect(running.code).toBe(0);
    expect(running.stdout).toMatch(/Progress: +40% done at its last checkpoint, .*\(5 min( \d+ s)? ago\)/);
    expect(running.stdout).toMatch(/Remaining: +about 1 h 12 min of its expected 2 h, from that checkpoint/);

    await ok('POST', `/v1/jobs/${job.id}/status`, { state: 'FAILED', reason: 'exit code 137 (OOMKilled) in replica 0' });
    const why = await runQm(['why', 'ckpt-run'], { env });
    expect(why.code).toBe(0);
    expect(why.stdout).toContain('FAILED');
    expect(why.stdout).toContain('reason: exit code 137 (OOMKilled) in replica 0');

    const plain = await ok('POST', '/v1/jobs', jobBody({ name: 'plain-run' }));
    await ok('DELETE', `/v1/jobs/${plain.id}`);
    const cancelled = await runQm(['why', 'plain-run'], { env });
    expect(cancelled.stdout).toMatch(/reason: .*admin/);
    expect((await runQm(['describe', 'plain-run'], { env })).stdout).toMatch(/Checkpoint: +none: a preempted run restarts from the start/);
  });

  it('qm describe of a multi-role job: each role with its own shape, and which roles sit on each node', async () => {
    const body = jobBody({ name: 'roles-run', roles: [{ name: 'launcher', replicas: 1, acceleratorsPerReplica: 0, cpuMillis: 1000, memoryMiB: 1024 }, { name: 'worker', replicas: 1, acceleratorsPerReplica: 8 }] });
    delete body.replicas;
    delete body.acceleratorsPerReplica;
    await ok('POST', '/v1/jobs', body);
    await ok('POST', '/v1/scheduler/cycles');
    const described = await runQm(['describe', 'roles-run'], { env });
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/Replicas: +2 in 2 roles, 8 accelerator\(s\) in all/);
    expect(described.stdout).toMatch(/ROLE +REPLICAS +MIN +ACCELERATORS +CPU +MEMORY\n +launcher +1 +1 +0 +1000 mCPU +1024 MiB\n +worker +1 +1 +8 +8000 mCPU +65536 MiB/);
    expect(described.stdout).toMatch(/NODE +REPLICAS +ACCELERATORS +ROLES/);
    expect(described.stdout).toMatch(/worker/);
  });
});
