import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';

/** One file of the built console, held in memory with its precompressed forms. */
export interface ConsoleFile {
  body: Buffer;
  gzip: Buffer | null;
  brotli: Buffer | null;
  contentType: string;
  etag: string;
  /** Vite puts content-hashed files under assets/: cacheable for ever. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.map']);

/**
 * The console's build output (`vite build` → dist/console), read once at start: a few hundred KB, so
 * every request is served from memory, compressed once, and no request path ever touches the disk.
 * Null when the directory has no index.html (the console was not built).
 */
export function loadConsoleFiles(dir: string): Map<string, ConsoleFile> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, ConsoleFile>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at)) {
      const path = join(at, entry);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const name = relative(dir, path).split(sep).join('/');
        const ext = extname(name);
        const body = readFileSync(path);
        const compress = COMPRESSIBLE.has(ext) && body.length > 512;
        files.set(name, {
          body,
          gzip: compress ? gzipSync(body, { level: 9 }) : null,
          brotli: compress ? brotliCompressSync(body) : null,
          contentType: TYPES[ext] ?? 'application/octet-stream',
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
          immutable: name.startsWith('assets/'),
        });
      }
    }
  };
  walk(dir);
  return files;
}

/** dist/console of this installation, found from this module's location (source under Jest, or dist). */
export function defaultConsoleDir(): string {
  let at = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(at, 'package.json')) && existsSync(join(at, 'apps')))
      return join(at, 'dist', 'console');
    const up = dirname(at);
    if (up === at) return join(process.cwd(), 'dist', 'console');
    at = up;
  }
}
