// The scheduler's and worker's port (health, metrics, and in Kubernetes mode the extender's verbs, which
// anyone on the cluster network can reach) closes slow and silent connections as the API's does
// (QM_HTTP_*_TIMEOUT_MS): each test waits for the server to close the socket, an event, not a clock.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { Config } from '#common';
import { startHealthServer, type HealthServer } from '../../../apps/scheduler/src/health-server.js';
import { rawConnection } from '../../support/raw-connection.js';

let server: HealthServer;
let port: number;

beforeAll(async () => {
  const config = Config.fromEnv({
    QM_ADMIN_TOKEN: 'health-timeouts-admin-0123456789',
    QM_HTTP_REQUEST_TIMEOUT_MS: '1000',
    QM_HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    QM_HTTP_IDLE_TIMEOUT_MS: '60000',
  });
  const probes = { timeoutMs: 100, postgres: () => Promise.resolve(1), redis: () => Promise.resolve(1) };
  server = await startHealthServer(config, 0, { role: 'scheduler', details: () => ({}) }, probes, pino({ level: 'silent' }));
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server?.close();
});

describe('the scheduler’s port does not keep slow or silent connections', () => {
  it('closes a connection whose request headers never finish (slowloris)', async () => {
    const received = await rawConnection(port, (s) => s.write(`POST /extender/filter HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n`));
    expect(received === '' || /^HTTP\/1\.1 408/.test(received)).toBe(true);
  }, 30_000);

  it('closes a connection whose promised body never comes', async () => {
    const received = await rawConnection(port, (s) => s.write(`POST /extender/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"Pod":`));
    expect(received === '' || /^HTTP\/1\.1 408/.test(received)).toBe(true);
  }, 30_000);

  it('closes a keep-alive connection left idle after its answer, having answered it', async () => {
    const received = await rawConnection(port, (s) => s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`));
    expect(received).toMatch(/^HTTP\/1\.1 200/);
  }, 30_000);
});
