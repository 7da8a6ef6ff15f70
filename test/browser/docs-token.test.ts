import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser.js';
import { ADMIN_TOKEN, type ConsoleService, startConsoleService } from './harness.js';

/**
 * The API's Swagger UI at /docs keeps a token pasted into "Authorize" for the page's life only: nothing of it in
 * localStorage (read by any script of the origin, and kept after the browser closes), none after a reload.
 */
describe('/docs keeps a pasted token for the page only', () => {
  let s: ConsoleService;
  let browser: Browser;
  beforeAll(async () => {
    s = await startConsoleService('browser_docs_token');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('authorized in the page, nothing stored, gone after a reload', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${s.url}/docs`);
      await page.waitForFunction(() => (globalThis as unknown as { ui?: { authSelectors?: unknown } }).ui?.authSelectors !== undefined);
      type Ui = { authSelectors: { authorized(): { toJS(): Record<string, unknown> } } };
      const authorized = (): Promise<string[]> => page.evaluate(() => Object.keys((globalThis as unknown as { ui: Ui }).ui.authSelectors.authorized().toJS()));
      // As a person does it: the Authorize button, the token pasted into the dialog, Authorize, Close.
      await page.click('.scheme-container button.authorize');
      await page.fill('.auth-container input', ADMIN_TOKEN);
      await page.click('.auth-btn-wrapper button.authorize');
      await page.click('.auth-btn-wrapper button.btn-done');
      expect(await authorized()).toEqual(['bearer']);

      const stored = await page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries((globalThis as unknown as { localStorage: Record<string, string> }).localStorage))));
      expect(stored).not.toContain(ADMIN_TOKEN);
      await page.reload();
      await page.waitForFunction(() => (globalThis as unknown as { ui?: { authSelectors?: unknown } }).ui?.authSelectors !== undefined);
      expect(await authorized()).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
