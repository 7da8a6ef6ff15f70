import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium (apt package `chromium`); never a browser downloaded by a test tool. */
export const CHROMIUM = '/usr/bin/chromium';

/** Screenshots of every page, kept as test artifacts (gitignored). */
export const ARTIFACTS = join(process.cwd(), 'artifacts', 'browser');

/**
 * Headless chromium with the flags this machine needs: no sandbox (root), and no background networking
 * (the machine's closed network would refuse it, noisily).
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Fails the test on any error the page logs (CSP violations, uncaught exceptions, failed scripts). */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // 401/403/404 answers the test provokes on purpose are logged by chromium as failed resources.
    if (m.type() === 'error' && !/status of (400|401|403|404)/.test(m.text()))
      errors.push(`console: ${m.text()}`);
  });
  return errors;
}
