// Idle and half-open connections are closed: a client that connects and sends nothing, one that sends part of
// a request's headers and stops (slowloris), one that sends headers promising a body that never comes, and a
// keep-alive connection left idle after its answer — each holds a socket (and, with a body, a buffer) for as
// long as the server lets it. Each test waits for the server to close the socket (an event, not a clock); the
// timeouts are set small here so that it comes soon.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawConnection as raw } from '../../support/raw-connection.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
let port: number;
const rawConnection = (send: Parameters<typeof raw>[1]): Promise<string> => raw(port, send);

beforeAll(async () => {
  h = await startHarness('conn_timeouts', { QM_HTTP_REQUEST_TIMEOUT_MS: '1000', QM_HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000', QM_HTTP_IDLE_TIMEOUT_MS: '60000' });
  port = Number(new URL(h.url).port);
});

afterAll(async () => {
  await h?.close();
});

describe('connections the API does not keep', () => {
  it('closes a connection that sends nothing', async () => {
    const received = await rawConnection(() => undefined);
    expect(received === '' || /^HTTP\/1\.1 408/.test(received)).toBe(true);
  }, 30_000);

  it('closes a connection whose request headers never finish (slowloris)', async () => {
    const received = await rawConnection((s) => s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n`));
    expect(received === '' || /^HTTP\/1\.1 408/.test(received)).toBe(true);
  }, 30_000);

  it('closes a connection whose promised body never comes', async () => {
    const received = await rawConnection((s) =>
      s.write(`POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nobody\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":`),
    );
    expect(received === '' || /^HTTP\/1\.1 (408|401)/.test(received)).toBe(true);
  }, 30_000);

  it('closes a keep-alive connection left idle after its answer, having answered it', async () => {
    const received = await rawConnection((s) => s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`));
    expect(received).toMatch(/^HTTP\/1\.1 200/);
  }, 30_000);

  it('still answers a request that arrives in time', async () => {
    expect((await h.request('GET', '/healthz')).status).toBe(200);
  });
});
