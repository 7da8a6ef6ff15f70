import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { loadConsoleFiles } from './console-files.js';
import { precompressDir } from '#common';

/** A built console: index.html and a hashed script big enough to compress. */
function consoleDir(): { dir: string; script: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'qm-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script src="/ui/assets/app.js"></script>');
  const script = Buffer.from(Array.from({ length: 400 }, (_, i) => `console.log(${i});`).join('\n'));
  writeFileSync(join(dir, 'assets', 'app.js'), script);
  return { dir, script };
}

describe('loadConsoleFiles', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("serves the build's precompressed files as they are, and does not list them as files of their own", async () => {
    const { dir, script } = consoleDir();
    dirs.push(dir);
    expect(await precompressDir(dir)).toBe(1); // index.html is too small to be worth it
    // Recognisable bytes: a file read from disk, not one compressed at load.
    const marker = gzipSync(script, { level: 1 });
    writeFileSync(join(dir, 'assets', 'app.js.gz'), marker);
    const loaded = loadConsoleFiles(dir)!;
    expect([...loaded.files.keys()].sort()).toEqual(['assets/app.js', 'index.html']);
    const file = loaded.files.get('assets/app.js')!;
    expect(file.gzip!.equals(marker)).toBe(true);
    expect(brotliDecompressSync(file.brotli!).equals(script)).toBe(true);
    expect(loaded.files.get('index.html')!.gzip).toBeNull();
    await loaded.compressed;
    expect(file.gzip!.equals(marker)).toBe(true);
  });

  it('compresses in the background, not while loading, what the build did not (or whose compressed form is older)', async () => {
    const { dir, script } = consoleDir();
    dirs.push(dir);
    await precompressDir(dir);
    rmSync(join(dir, 'assets', 'app.js.br'));
    const old = new Date(Date.now() - 60_000);
    writeFileSync(join(dir, 'assets', 'app.js.gz'), gzipSync(Buffer.from('stale'))); // from an earlier build
    utimesSync(join(dir, 'assets', 'app.js.gz'), old, old);
    const loaded = loadConsoleFiles(dir)!;
    const file = loaded.files.get('assets/app.js')!;
    expect(file.gzip).toBeNull();
    expect(file.brotli).toBeNull();
    await loaded.compressed;
    expect(gunzipSync(file.gzip!).equals(script)).toBe(true);
    expect(brotliDecompressSync(file.brotli!).equals(script)).toBe(true);
  });

  it('is null when the console was not built', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qm-console-'));
    dirs.push(dir);
    expect(loadConsoleFiles(dir)).toBeNull();
  });
});
