import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Config } from '#common';
import { createTestDatabase } from '#db';
import { createApiApp } from '../../apps/api/src/main.js';
import { ADMIN_TOKEN, type ConsoleService, startConsoleService } from './harness.js';

/** /ui over plain HTTP: no token needed, cache headers, SPA fallback, compression, and no HTML in place of a missing asset. */
describe('the API serves the built console at /ui', () => {
  let s: ConsoleService;
  let asset: string;
  beforeAll(async () => {
    s = await startConsoleService('browser_serving');
  });
  afterAll(async () => {
    await s?.close();
  });

  it('index.html at /ui/ without a token, never cached stale, with a strict CSP', async () => {
    const r = await s.request('GET', '/ui/', { token: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const match = /src="\/ui\/(assets\/[^"]+\.js)"/.exec(String(r.body));
    expect(match).not.toBeNull();
    asset = match![1]!;
    const bare = await fetch(`${s.url}/ui`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/ui/');
  });

  it("the console's own routes fall back to index.html (deep links work); unknown files are 404, not HTML", async () => {
    const index = (await s.request('GET', '/ui/', { token: null })).body;
    for (const path of ['/ui/queue', '/ui/jobs/0b0e8a38-6a4b-4d43-9c55-54a1d4f7c3a1', '/ui/teams?x=1']) {
      const r = await s.request('GET', path, { token: null });
      expect({ path, status: r.status, same: r.body === index }).toEqual({ path, status: 200, same: true });
    }
    for (const path of [
      '/ui/assets/nope.js',
      '/ui/missing.css',
      '/ui/assets/%2e%2e/index.html',
      '/ui/..%2f..%2fpackage.json',
    ]) {
      // Sent as is (fetch would normalise the dot segments away before they reach the server).
      const r = await rawGet(s.url, path);
      expect({ path, status: r.status, type: r.type }).toEqual({
        path,
        status: 404,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
    }
  });

  it('hashed assets are immutable for a year, compressed when asked, and revalidate with their ETag', async () => {
    const plain = await fetch(`${s.url}/ui/${asset}`);
    const body = Buffer.from(await plain.arrayBuffer());
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = plain.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    // Node's fetch decompresses; ask over a raw request for the bytes on the wire.
    const gz = await fetch(`${s.url}/ui/${asset}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(Buffer.from(await gz.arrayBuffer()).equals(body)).toBe(true);
    const again = await fetch(`${s.url}/ui/${asset}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const raw = (await rawGet(s.url, `/ui/${asset}`, { 'accept-encoding': 'gzip' })).body;
    expect(raw.length).toBeLessThan(body.length / 2);
    expect(gunzipSync(raw).equals(body)).toBe(true);
  });

  it('the REST API keeps its own 404s and auth next to /ui', async () => {
    expect((await s.request('GET', '/v1/queue', { token: null })).status).toBe(401);
    expect((await s.request('GET', '/v1/queue', { token: ADMIN_TOKEN })).status).toBe(200);
    expect((await s.request('GET', '/uix', { token: null })).status).toBe(404);
  });

  it('without a built console, /ui says so in a problem+json 404 and the API still serves', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'qm-no-console-'));
    const db = await createTestDatabase({ label: 'browser_noconsole' });
    const config = Config.fromEnv({ QM_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent' }).with({
      databaseUrl: db.url,
      port: 0,
      host: '127.0.0.1',
    });
    const api = await createApiApp(config, { migrate: false, consoleDir: empty });
    try {
      const url = await api.listen();
      const r = await fetch(`${url}/ui/`);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await r.json()) as { detail: string }).detail).toContain('run npm run build');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
      await db.drop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

/** A GET over node:http: the path goes out byte for byte, and the body comes back as sent (no decompression). */
function rawGet(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: Buffer }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          body: Buffer.concat(chunks),
        }),
      );
    })
      .on('error', reject)
      .end();
  });
}
