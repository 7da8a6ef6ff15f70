import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The package's bin (package.json "bin".qm): the very file `npm ci` builds and `npx qm` runs. */
export const QM_BIN = join(ROOT, (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { qm: string } }).bin.qm);

/**
 * Builds dist/ (incremental `tsc -p tsconfig.build.json`, what `npm ci` runs as `prepare`) so the bin is
 * current with the sources; under flock, so test files in parallel workers never build at once.
 */
export function buildQm(): void {
  mkdirSync(join(ROOT, '.cache'), { recursive: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync('flock', [join(ROOT, '.cache', 'qm-build.lock'), process.execPath, tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed (${r.status}): ${r.stdout}${r.stderr}`);
}

/** HOME of every qm run that does not set one: empty, so the machine's ~/.config never leaks in. */
const EMPTY_HOME = mkdtempSync(join(tmpdir(), 'qm-home-'));

export interface QmResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface QmOptions {
  env?: Record<string, string>;
  stdin?: string;
  cwd?: string;
}

/** Runs the real `qm` to its end (see startQm). */
export function runQm(args: string[], options: QmOptions = {}): Promise<QmResult> {
  return startQm(args, options).result;
}

/**
 * Starts the real `qm` as a child process: no TTY (pipes), TZ=UTC, and only the environment given (plus
 * PATH), so nothing of the machine's own configuration (HOME, QM_*) leaks in. Returns it running (for
 * --wait and --watch) with its output so far, and a way to signal it (Ctrl-C is SIGINT).
 */
export function startQm(
  args: string[],
  options: QmOptions = {},
): { result: Promise<QmResult>; output: () => string; errors: () => string; kill: (signal: NodeJS.Signals) => void } {
  let stdout = '';
  let stderr = '';
  const child = spawn(process.execPath, [QM_BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: EMPTY_HOME, TZ: 'UTC', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(options.stdin ?? '');
  const result = new Promise<QmResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { result, output: () => stdout, errors: () => stderr, kill: (signal) => void child.kill(signal) };
}

/** A local port nothing listens on (a server that is down: connection refused). */
export function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}
