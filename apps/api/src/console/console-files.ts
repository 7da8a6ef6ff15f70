import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compress, compressible, ENCODINGS, type Encoding } from '#common';

/** One file of the built console, held in memory with its compressed forms. */
export interface ConsoleFile {
  body: Buffer;
  /** Null: not worth compressing, or not compressed yet (then served as is until it is). */
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
export interface ConsoleFiles {
  files: Map<string, ConsoleFile>;
  /** Settles when every compressible file has its compressed forms (at once when the build wrote them all). */
  compressed: Promise<void>;
}

/**
 * The console's build output (`vite build` → dist/console), read once at start: a few hundred KB, so
 * every request is served from memory and no request path ever touches the disk. The compressed forms
 * are the build's `<file>.gz` / `<file>.br` (precompress.ts); a file without them (or with older ones) is
 * compressed in the background, off the main thread, and served as is meanwhile — nothing compresses on
 * the start path. Null when the directory has no index.html (the console was not built).
 */
export function loadConsoleFiles(dir: string): ConsoleFiles | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, ConsoleFile>();
  const pending: Promise<void>[] = [];
  const walk = (at: string): void => {
    const entries = new Set(readdirSync(at));
    for (const entry of entries) {
      const path = join(at, entry);
      const stat = statSync(path);
      if (stat.isDirectory()) {
        walk(path);
        continue;
      }
      if (Object.values(ENCODINGS).some((suffix) => entry.endsWith(suffix) && entries.has(entry.slice(0, -suffix.length)))) continue;
      const name = relative(dir, path).split(sep).join('/');
      const body = readFileSync(path);
      const file: ConsoleFile = {
        body,
        gzip: null,
        brotli: null,
        contentType: TYPES[extname(name)] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        immutable: name.startsWith('assets/'),
      };
      files.set(name, file);
      if (!compressible(name, body.length)) continue;
      for (const encoding of Object.keys(ENCODINGS) as Encoding[]) {
        const built = path + ENCODINGS[encoding];
        if (entries.has(entry + ENCODINGS[encoding]) && statSync(built).mtimeMs >= stat.mtimeMs) file[encoding] = readFileSync(built);
        else {
          // A failure leaves the file served as is (never an unhandled rejection).
          pending.push(compress(body, encoding).then((compressed) => void (file[encoding] = compressed), () => undefined));
        }
      }
    }
  };
  walk(dir);
  return { files, compressed: Promise.all(pending).then(() => undefined) };
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
