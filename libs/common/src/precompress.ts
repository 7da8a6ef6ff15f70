import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/**
 * Compression of the built console, shared by the build (`vite build` writes `<file>.gz` and `<file>.br`
 * next to each file, see apps/console/vite.config.ts) and the API (apps/api/src/console/console-files.ts serves those, and
 * compresses in the background only what a build left uncompressed). Compressing at the highest levels
 * takes seconds of CPU; done at start it delayed the scheduler's first cycle (bench:e2e drain).
 */

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.map']);

/** Precompressed forms, by encoding, and the suffix of their file. */
export const ENCODINGS = { gzip: '.gz', brotli: '.br' } as const;
export type Encoding = keyof typeof ENCODINGS;

/** Whether a file of this name and size is worth serving compressed. */
export function compressible(name: string, size: number): boolean {
  return COMPRESSIBLE.has(extname(name)) && size > 512;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** `body` in `encoding`, at the highest level, off the main thread (zlib's thread pool). */
export function compress(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === 'gzip'
    ? gzipAsync(body, { level: 9 })
    : brotliAsync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
}

/** Writes `<file>.gz` and `<file>.br` next to every compressible file under `dir`; returns how many files. */
export async function precompressDir(dir: string): Promise<number> {
  let count = 0;
  const walk = async (at: string): Promise<void> => {
    for (const entry of readdirSync(at)) {
      const path = join(at, entry);
      if (statSync(path).isDirectory()) {
        await walk(path);
        continue;
      }
      const body = readFileSync(path);
      if (!compressible(entry, body.length)) continue;
      for (const encoding of Object.keys(ENCODINGS) as Encoding[]) writeFileSync(path + ENCODINGS[encoding], await compress(body, encoding));
      count++;
    }
  };
  await walk(dir);
  return count;
}
