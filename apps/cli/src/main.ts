#!/usr/bin/env node
// `qm`: the Quartermaster command-line client (built to dist/apps/cli/src/main.js, the package's bin).
import { runCycle } from '#core';
import { runCli } from './cli.js';
import { findRepoRoot } from './repo-root.js';

// `qm ls | head`: the reader went away; stop quietly instead of crashing on EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// `--watch` stops on Ctrl-C or SIGTERM with exit 0; it listens only once a watch starts (other commands die as usual).
let interrupted: AbortSignal | undefined;
const interrupts = (): AbortSignal => {
  if (interrupted !== undefined) return interrupted;
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  return (interrupted = stop.signal);
};

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  repoRoot: findRepoRoot(),
  cwd: process.cwd(),
  env: process.env,
  stdin: process.stdin,
  scheduler: runCycle,
  now: () => Date.now(),
  interrupts,
});
// A watch that was stopped: end now rather than when the last idle connection closes.
if (interrupted?.aborted === true) process.exit();
