import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Once per run of the browser suite:
 * 1. Debian's chromium, installed with apt when missing (under a flock, so parallel runs install once;
 *    the package takes about a minute; no browser is ever downloaded by a test tool);
 * 2. the console built by Vite into a fresh directory of this run, which the tests serve at /ui.
 */
/** Same path as browser.ts (this file is loaded by Jest outside the module mapper, so it imports nothing of ours). */
const CHROMIUM = '/usr/bin/chromium';

export default function globalSetup(): void {
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(
      `browser suite: ${CHROMIUM} missing; installing Debian's chromium with apt (once)\n`,
    );
    execFileSync(
      'flock',
      [
        '/tmp/quartermaster-chromium.lock',
        'sh',
        '-c',
        `test -x ${CHROMIUM} || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium; }`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 },
    );
    if (!existsSync(CHROMIUM))
      throw new Error(`chromium is still missing at ${CHROMIUM} after apt-get install chromium`);
  }
  const out = mkdtempSync(join(tmpdir(), 'qm-console-'));
  execFileSync(
    process.execPath,
    [
      'node_modules/vite/bin/vite.js',
      'build',
      '--config',
      'apps/console/vite.config.ts',
      '--outDir',
      out,
      '--emptyOutDir',
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    },
  );
  process.env.QM_TEST_CONSOLE_DIR = out;
}
