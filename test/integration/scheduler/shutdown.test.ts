// SIGTERM is a clean stop for every entry point: exit code 0, and a scheduler gives its lease back (so a
// standby takes over at once instead of waiting for the TTL).
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { childEnv } from './env.js';
import { spawnRole, type RoleProcess } from './processes.js';
import { uniquePrefix, waitFor } from './support.js';

jest.setTimeout(120_000);

let testDb: TestDatabase;
let db: Database;
const running: RoleProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_shutdown' });
  db = new Database(testDb.url, { poolSize: 2 });
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.kill('SIGKILL')));
  await db.close();
  await testDb.drop();
});

async function lease(): Promise<{ holder: string; released: boolean } | undefined> {
  const { rows } = await db.pool.query<{ holder: string; released: boolean }>(
    `SELECT holder, expires_at <= now() AS released FROM scheduler_leases WHERE name = 'scheduler'`,
  );
  return rows[0];
}

describe('SIGTERM', () => {
  it.each([['all'], ['scheduler']] as const)('`%s`: exits 0 and releases the scheduler lease', async (role) => {
    const child = spawnRole(role, childEnv(testDb.url, uniquePrefix(`shutdown-${role}`), { QM_LEASE_TTL_MS: '60000', QM_LEASE_RENEW_MS: '1000' }));
    running.push(child);
    await child.ready;
    await waitFor('the process leads', async () => ((await lease())?.released === false ? true : undefined));
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    // With a 60 s TTL, only a release makes the lease free now.
    expect(await lease()).toMatchObject({ released: true });
    expect(child.lines.some((line) => typeof line['msg'] === 'string' && line['msg'].endsWith('stopped'))).toBe(true);
  });

  it.each([['all'], ['scheduler']] as const)('`%s`: a SIGTERM while still starting stops it cleanly once started', async (role) => {
    const child = spawnRole(role, childEnv(testDb.url, uniquePrefix(`early-${role}`), { QM_LEASE_TTL_MS: '60000', QM_LEASE_RENEW_MS: '1000' }));
    running.push(child);
    await waitFor('its first log line', () => Promise.resolve(child.lines.length > 0 || undefined), 30_000);
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    const held = await lease();
    if (held) expect(held.released).toBe(true);
  });

  // The role starts before its HTTP server (a scheduler's first cycle does not wait for NestJS to load),
  // so a server that cannot listen must stop the role again: without that, the process exits holding
  // the lease and a standby waits for its TTL.
  it.each([['all'], ['scheduler']] as const)('`%s`: a health server that cannot listen (its port taken) exits 1 and gives the lease back', async (role) => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '0.0.0.0', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const child = spawnRole(role, childEnv(testDb.url, uniquePrefix(`port-${role}`), { QM_SCHEDULER_PORT: String(port), QM_LEASE_TTL_MS: '60000', QM_LEASE_RENEW_MS: '1000' }));
      running.push(child);
      expect(await child.exited).toBe(1);
      const held = await lease();
      if (held) expect(held.released).toBe(true);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('`api`: exits 0', async () => {
    const child = spawnRole('api', childEnv(testDb.url, uniquePrefix('shutdown-api')));
    running.push(child);
    await child.ready;
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });
});
