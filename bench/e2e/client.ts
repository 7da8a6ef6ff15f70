import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 128 });

export interface Reply {
  status: number;
  body: string;
}

/**
 * One JSON request over a keep-alive pool. A socket the server closed while idle fails with
 * ECONNRESET/EPIPE on reuse: such a request is sent again (job submissions carry an Idempotency-Key,
 * so a retried POST never creates a second job).
 */
export async function call(base: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(base, method, path, token, body, headers);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 5 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw error;
    }
  }
}

function once(base: string, method: string, path: string, token: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, method, hostname: url.hostname, port: url.port, path: url.pathname + url.search, headers: { authorization: `Bearer ${token}`, ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export async function mustCall(base: string, method: string, path: string, token: string, body?: unknown): Promise<unknown> {
  const reply = await call(base, method, path, token, body);
  if (reply.status >= 300) throw new Error(`${method} ${path} → ${reply.status}: ${reply.body.slice(0, 500)}`);
  return reply.body ? JSON.parse(reply.body) : null;
}

/** Runs `task(i)` for i in [0, n) with at most `concurrency` in flight. */
export async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await task(next++);
  });
  await Promise.all(lanes);
}

export function closeClient(): void {
  agent.destroy();
}
