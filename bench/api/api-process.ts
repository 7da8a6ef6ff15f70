// The built API as a child process, for the API benchmarks: a free port, start-up until /healthz answers,
// and one JSON call.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../apps/api/src/main.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The API on 127.0.0.1:`port` over `databaseUrl` with admin token `adminToken`; its Redis prefix is
 * `qm-bench-<port>` unless `env` names one. Resolves once /healthz answers (30 s at most).
 */
export async function startApiProcess(databaseUrl: string, port: number, adminToken: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      QM_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      QM_REDIS_PREFIX: `qm-bench-${port}`,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the API exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error('the API did not start within 30 s');
}

/** A JSON request as `token`; throws unless 2xx; the parsed body (null when empty). */
export async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${(await res.text()).slice(0, 500)}`);
  const text = await res.text();
  return text === '' ? null : (JSON.parse(text) as unknown);
}
