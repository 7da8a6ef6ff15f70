import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REGISTER = './apps/scheduler/dev/ts-register.mjs';

const ENTRIES = {
  all: 'apps/server/src/main.ts',
  api: 'apps/api/src/main.ts',
  scheduler: 'apps/scheduler/src/main.ts',
  worker: 'apps/scheduler/src/main-worker.ts',
} as const;

export interface RoleProcess {
  role: keyof typeof ENTRIES;
  child: ChildProcess;
  /** Resolves with the health server URL once the process logged that it started. */
  ready: Promise<string>;
  /** Every JSON log line so far. */
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `npm run start:api|scheduler|worker`'s entry point from the sources, as a child process. */
export function spawnRole(role: keyof typeof ENTRIES, env: Record<string, string>): RoleProcess {
  const child = spawn(process.execPath, ['--import', REGISTER, ENTRIES[role]], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', QM_SCHEDULER_PORT: '0', QM_WORKER_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        lines.push(parsed);
        // "quartermaster scheduler started" / "… worker started" / "quartermaster API listening"
        if (typeof parsed['msg'] === 'string' && /(started|listening)$/.test(parsed['msg']) && typeof parsed['url'] === 'string') resolve(parsed['url']);
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => reject(new Error(`${role} exited (${code}) before it started: ${stderr.slice(-2000)}`)));
  });
  ready.catch(() => undefined);
  return {
    role,
    child,
    ready,
    lines,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}

export async function getJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url);
  return (await response.json()) as Record<string, unknown>;
}
