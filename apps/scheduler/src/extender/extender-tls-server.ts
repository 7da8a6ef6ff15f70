import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { serverTimeouts, type HttpTimeouts } from '#common';
import type { RouteHost } from './extender-routes.js';

/**
 * The extender's own listener with mutual TLS (QM_EXTENDER_TLS_*): only a client whose certificate the
 * configured CA signed — kube-scheduler's, as its extender `tlsConfig` presents it — completes the
 * handshake; anyone else is refused before a byte of HTTP. Set all three files, or none.
 */
export interface ExtenderTlsSettings {
  /** The listener's port (QM_EXTENDER_TLS_PORT, default 8443; 0: any free one). */
  port: number;
  /** PEM files: the server's certificate and key, and the CA that signs the clients' certificates. */
  certFile: string;
  keyFile: string;
  clientCaFile: string;
}

export class ExtenderTlsSettingsError extends Error {}

const FILES = { certFile: 'QM_EXTENDER_TLS_CERT_FILE', keyFile: 'QM_EXTENDER_TLS_KEY_FILE', clientCaFile: 'QM_EXTENDER_TLS_CLIENT_CA_FILE' } as const;

/** The TLS listener's settings, or null when none of its files is set (the extender is then served on the scheduler's plain port). */
export function extenderTlsSettingsFromEnv(env: Record<string, string | undefined>): ExtenderTlsSettings | null {
  const files = Object.fromEntries(Object.entries(FILES).map(([key, name]) => [key, env[name]?.trim() || undefined])) as Record<keyof typeof FILES, string | undefined>;
  const missing = Object.entries(FILES).filter(([key]) => files[key as keyof typeof FILES] === undefined).map(([, name]) => name);
  if (missing.length === 3) return null;
  if (missing.length > 0) throw new ExtenderTlsSettingsError(`the extender's mutual TLS needs ${Object.values(FILES).join(', ')}; missing ${missing.join(', ')}`);
  const rawPort = env['QM_EXTENDER_TLS_PORT']?.trim() || '8443';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ExtenderTlsSettingsError(`QM_EXTENDER_TLS_PORT=${rawPort} must be a port (0-65535)`);
  return { port, certFile: files.certFile!, keyFile: files.keyFile!, clientCaFile: files.clientCaFile! };
}

/** kube-scheduler's ExtenderArgs for a large cluster stay far below this (it sends node names only). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

type Handler = Parameters<RouteHost['post']>[1];

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export interface ExtenderTlsServer {
  /** https://<host>:<port> */
  url: string;
  close(): Promise<void>;
}

/**
 * Listens with mutual TLS and serves the routes `register` adds (the extender's POST /extender/*), with the
 * same request, keep-alive and idle timeouts as the process's other ports (QM_HTTP_*).
 */
export async function startExtenderTlsServer(
  settings: ExtenderTlsSettings,
  host: string,
  timeouts: HttpTimeouts,
  register: (host: RouteHost) => void,
  logger: Logger,
): Promise<ExtenderTlsServer> {
  const routes = new Map<string, Handler>();
  register({ post: (path, handler) => routes.set(path, handler) });
  const limits = serverTimeouts(timeouts);
  const server: Server = createServer(
    {
      ...limits.http,
      keepAliveTimeout: limits.keepAliveTimeout,
      // A client that connects and never finishes the handshake is held no longer than a request may take.
      handshakeTimeout: limits.http.requestTimeout,
      cert: readFileSync(settings.certFile),
      key: readFileSync(settings.keyFile),
      ca: readFileSync(settings.clientCaFile),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    (req: IncomingMessage, res: ServerResponse) => {
      // The handshake already refused clients without a certificate of the CA; this is belt and braces.
      if (!(req.socket as TLSSocket).authorized) return send(res, 401, { Error: 'a client certificate signed by the extender CA is required' });
      const handler = req.method === 'POST' ? routes.get((req.url ?? '').split('?')[0]!) : undefined;
      if (!handler) return send(res, 404, { Error: `no ${req.method} ${req.url} here` });
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          send(res, 413, { Error: `the body must be at most ${MAX_BODY_BYTES} bytes` });
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (res.headersSent) return;
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined; // the route answers 400 for a body that is not a JSON object
        }
        void handler({ body }, { code: (status) => ({ send: (payload) => send(res, status, payload) }) })
          .then((result) => {
            if (!res.headersSent) send(res, 200, result);
          })
          .catch((error: unknown) => {
            logger.warn({ err: error }, 'extender request failed');
            if (!res.headersSent) send(res, 500, { Error: error instanceof Error ? error.message : String(error) });
          });
      });
    },
  );
  server.setTimeout(limits.connectionTimeout); // a silent socket after the handshake is closed
  server.on('tlsClientError', (error) => logger.debug({ err: error }, 'extender: TLS handshake refused'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  logger.info({ port }, 'extender: serving with mutual TLS');
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
