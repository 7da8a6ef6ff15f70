// The extender's mutual-TLS listener closes silent and slow connections as the process's other ports do
// (QM_HTTP_*_TIMEOUT_MS): a socket that never starts the handshake, and a client with a good certificate
// whose request headers never finish. Each test waits for the server to close the socket, an event.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { pino } from 'pino';
import { startExtenderTlsServer, type ExtenderTlsServer } from '../../../apps/scheduler/src/extender/extender-tls-server.js';
import { rawConnection } from '../../support/raw-connection.js';
import { TestCerts } from '../../support/test-certs.js';

const certs = new TestCerts();
let server: ExtenderTlsServer;
let port: number;

beforeAll(async () => {
  certs.ca('ca');
  certs.cert('server', 'ca', 'serverAuth', 'IP:127.0.0.1');
  certs.cert('client', 'ca', 'clientAuth');
  server = await startExtenderTlsServer(
    { port: 0, certFile: certs.file('server.crt'), keyFile: certs.file('server.key'), clientCaFile: certs.file('ca.crt') },
    '127.0.0.1',
    { requestMs: 1000, keepAliveMs: 1000, idleMs: 1000 },
    (host) => host.post('/extender/filter', () => Promise.resolve({ NodeNames: [], FailedNodes: {}, Error: '' })),
    pino({ level: 'silent' }),
  );
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server?.close();
  certs.remove();
});

describe('the extender’s TLS port does not keep silent or slow connections', () => {
  it('closes a socket that never starts the TLS handshake', async () => {
    expect(await rawConnection(port, () => undefined)).toBe('');
  });

  /** A TLS connection with the good client certificate; `send` writes to it; resolves with what came back once the server closes it. */
  async function tlsConnection(send: (write: (text: string) => void) => void): Promise<string> {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(certs.file('ca.crt')), cert: readFileSync(certs.file('client.crt')), key: readFileSync(certs.file('client.key')) });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
    send((text) => socket.write(text));
    return closed;
  }

  // Node's own defaults (30 s for headers, no idle limit) would not close these within the tests' 10 s.
  it('closes a client with a good certificate whose request headers never finish', async () => {
    const received = await tlsConnection((write) => write('POST /extender/filter HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n'));
    expect(received === '' || received.startsWith('HTTP/1.1 408')).toBe(true);
  }, 10_000);

  it('closes a client with a good certificate that never sends a request', async () => {
    expect(await tlsConnection(() => undefined)).toBe('');
  }, 10_000);
});
