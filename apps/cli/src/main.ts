#!/usr/bin/env node
// `qm`: the Quartermaster command-line client (built to dist/apps/cli/src/main.js, the package's bin).
import { runCycle } from '#core';
import { runCli } from './cli.js';
import { findRepoRoot } from './repo-root.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  repoRoot: findRepoRoot(),
  cwd: process.cwd(),
  env: process.env,
  stdin: process.stdin,
  scheduler: runCycle,
  now: () => Date.now(),
});
