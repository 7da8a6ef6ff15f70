import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, jest } from '@jest/globals';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

jest.setTimeout(120_000);

describe('FaultProxy', () => {
  it('leaves nothing behind: a process that reset a connection already ended exits by itself', async () => {
    const child = spawn(process.execPath, ['--import', './apps/scheduler/dev/ts-register.mjs', 'test/chaos/fixtures/half-closed-reset.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Not a speed assertion: without the fix the process never exits (it spins at exit, waiting for a
    // socket handle that is never closed), which is what kept the chaos suite's Jest from exiting.
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
      new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), 60_000))),
    ]);
    clearTimeout(timer);
    if (exited === 'still running') child.kill('SIGKILL');
    expect({ exited, output: output.trim() }).toEqual({ exited: 0, output: 'closed' });
  });
});
