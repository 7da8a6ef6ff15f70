import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The repository's root: the nearest directory above this file with a package.json (dist/bench/e2e or bench/e2e). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
const ROOT = repoRoot();

/** What the service runs: the built `npm start` (default), or its sources through the dev loader (benches run from TypeScript). */
export const SERVICE_FROM_DIST = ['dist/apps/server/src/main.js'];
export const SERVICE_FROM_SOURCES = ['--import', './apps/scheduler/dev/ts-register.mjs', 'apps/server/src/main.ts'];

export interface Service {
  url: string;
  /** totalMs of every committed cycle, from the service's structured logs. */
  cycleMs: number[];
  /** Cycle number → epoch ms of its "cycle committed" log line (just after its commit). */
  committedAt: Map<number, number>;
  /** Phases (ms) of every committed cycle, in log order. */
  cyclePhasesMs: Record<string, number>[];
  /** Log message → epoch ms of its first line ("quartermaster API listening", "quartermaster both started", "became leader"…). */
  firstLogAt: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Starts `dist/apps/server/src/main.js` (API + scheduler + worker; standalone mode, or Kubernetes mode
 * with KUBECONFIG) in a process of its own, on a free port.
 */
export async function startService(
  env: Record<string, string>,
  onLine?: (entry: Record<string, unknown>) => void,
  entry: readonly string[] = SERVICE_FROM_DIST,
): Promise<Service> {
  // QM_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service (node flags, space-separated).
  const nodeArgs = (process.env['QM_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', QM_SCHEDULER_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // QM_BENCH_LOG=path keeps the service's log lines (phases of every cycle) for a closer look.
  const keep = process.env['QM_BENCH_LOG'] ? createWriteStream(process.env['QM_BENCH_LOG'], { flags: 'a' }) : null;
  const cycleMs: number[] = [];
  const committedAt = new Map<number, number>();
  const cyclePhasesMs: Record<string, number>[] = [];
  const firstLogAt = new Map<string, number>();
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    keep?.write(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      keep?.write(`${line}\n`);
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; url?: string; totalMs?: number; cycle?: number; time?: string; phasesMs?: Record<string, number> };
      onLine?.(entry);
      if (entry.msg && entry.time && !firstLogAt.has(entry.msg)) firstLogAt.set(entry.msg, Date.parse(entry.time));
      if (entry.msg === 'quartermaster API listening' && entry.url) resolve(entry.url);
      if (entry.msg === 'cycle committed' && typeof entry.totalMs === 'number') {
        cycleMs.push(entry.totalMs);
        cyclePhasesMs.push(entry.phasesMs ?? {});
        if (typeof entry.cycle === 'number' && entry.time) committedAt.set(entry.cycle, Date.parse(entry.time));
      }
    });
    void exited.then(() => reject(new Error(`service exited before listening: ${stderr.slice(-1500)}`)));
  });
  return {
    url,
    cycleMs,
    committedAt,
    cyclePhasesMs,
    firstLogAt,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
