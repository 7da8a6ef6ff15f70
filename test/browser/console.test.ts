import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Database, recordFleetHistory } from '#db';
import { collectPageErrors, launchBrowser, screenshot } from './browser.js';
import {
  ADMIN_TOKEN,
  type ConsoleService,
  jobBody,
  memberToken,
  seedFleet,
  startConsoleService,
} from './harness.js';

// A real browser against the real service on a shared 2-core machine: generous, never a timing assertion.
jest.setTimeout(180_000);
const WAIT = 30_000;
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

describe('web console in Debian chromium, against the real API, Postgres and Redis', () => {
  let s: ConsoleService;
  let browser: Browser;
  let alice: string;
  let context: BrowserContext | null = null;
  let errors: string[] = [];

  beforeAll(async () => {
    s = await startConsoleService('browser_console');
    await seedFleet(s);
    alice = await memberToken(s, 'alice', ['vision']);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });
  afterEach(async () => {
    await context?.close();
    context = null;
    expect(errors).toEqual([]);
    errors = [];
  });

  const open = async (viewport = DESKTOP): Promise<Page> => {
    context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    errors = collectPageErrors(page);
    return page;
  };
  const signIn = async (page: Page, token: string, path = '/ui/'): Promise<void> => {
    await page.goto(`${s.url}${path}`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
  };
  const go = async (page: Page, link: string): Promise<void> => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: link }).click();
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  };
  const cycle = async (): Promise<void> => {
    await s.ok('POST', '/v1/scheduler/cycles');
  };

  it('a wrong token gets a clear message, and nothing is stored', async () => {
    const page = await open();
    await page.goto(`${s.url}/ui/`);
    await page.getByLabel('API token').fill('qm_this-is-not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('This token was not accepted');
    expect(await alert.textContent()).toContain('not valid');
    expect(await page.evaluate<number>('sessionStorage.length + localStorage.length')).toBe(0);
    await screenshot(page, 'sign-in-wrong-token');
    // The empty form says what to do, too.
    await page.getByLabel('API token').fill('');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Paste your API token');
  });

  it('signs in with the keyboard alone; the token stays in session storage, never in the URL', async () => {
    const page = await open();
    await page.goto(`${s.url}/ui/queue`);
    // The token field has focus on arrival: type, Enter.
    await page.waitForFunction("document.activeElement?.id === 'token'");
    await page.keyboard.type(alice);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Queue', level: 1 }).waitFor();
    expect(page.url()).not.toContain(alice);
    expect(await page.evaluate<string>("Object.values(sessionStorage).join(' ')")).toContain(alice);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    // First Tab reaches the skip link; following it moves to the page content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Skip to content');
    // Reload: still signed in (same tab); signing out forgets the token.
    await page.reload();
    await page.getByRole('heading', { name: 'Queue', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
  });

  it('an admin sees the whole cluster: capacity per flavor, the scheduler, the node heat map', async () => {
    await cycle();
    const page = await open();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const h100 = page.getByRole('row', { name: /^h100-80gb/ });
    await h100.waitFor();
    // 4 nodes × 8; h100-b2 is cordoned and empty: 24 free, 8 unschedulable.
    expect((await h100.getByRole('cell').allTextContents()).map((t) => t.trim())).toEqual([
      'nvidia-gpu',
      '4',
      '0',
      '24',
      '8',
      '32',
    ]);
    expect(await page.getByRole('row', { name: /^trn1/ }).getByRole('cell').allTextContents()).toEqual([
      'aws-trainium',
      '4',
      '0',
      '64',
      '0',
      '64',
    ]);
    expect(await page.getByText('Leader').locator('xpath=following-sibling::dd[1]').textContent()).toMatch(
      /\S/,
    );
    expect(await page.locator('canvas[role=img]').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('canvas[role=img]').first().getAttribute('aria-label')).toContain(
      'h100-80gb: 0 allocated, 24 free, 8 unschedulable of 32',
    );

    await go(page, 'Nodes');
    await page.locator('[data-node="h100-b2"]').waitFor();
    expect(await page.locator('[data-node="h100-b2"]').getAttribute('class')).toContain('cordoned');
    expect(await page.locator('[data-node="h100-b2"]').getAttribute('aria-label')).toContain(
      'cordoned or not ready',
    );
    expect(await page.locator('[data-node="h100-a1"]').getAttribute('aria-label')).toBe(
      'h100-a1: 0 of 8 in use, 8 free',
    );
    expect(
      await page
        .getByRole('figure')
        .filter({ hasText: 'zone us-east-1a › block b1 › domain nvl-1' })
        .locator('[data-node]')
        .count(),
    ).toBe(2);
    await screenshot(page, 'nodes-admin');
    await go(page, 'Usage');
    await page.getByText('No accelerator use in this window.').first().waitFor();
  });

  it('a member submits over REST, sees the job pending with reason and ETA, sees it admitted, and cancels it from the UI', async () => {
    // vision's quota on h100-80gb is 16 with no borrowing: big-run takes it all, llama-ft waits for it.
    const big = await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({ name: 'big-run', replicas: 2, expectedRuntimeSeconds: 3600 }),
      alice,
    );
    await cycle();
    // An infra lead's default class: alice's next job, naming none, gets it (same value 0 as big-run's).
    await s.ok('PUT', '/v1/priority-classes/standard', { value: 0, default: true });
    const llama = await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({ name: 'llama-ft', replicas: 1, topology: { level: 'block' } }),
      alice,
    );
    expect(llama.priorityClass).toBe('standard');
    await cycle();
    const pending = await s.ok('GET', `/v1/jobs/${llama.id}`, undefined, alice);
    expect(pending.state).toBe('PENDING');
    expect(pending.pending.code).toBe('QUOTA_EXCEEDED');
    expect(pending.pending.estimatedStartAt).not.toBeNull();

    const page = await open();
    await signIn(page, alice);
    await go(page, 'Queue');
    const row = page.locator(`#pending-table tr[data-job="${llama.id}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('1'); // position
    expect(await row.textContent()).toContain('Team quota is used up');
    expect(await row.textContent()).toContain('QUOTA_EXCEEDED');
    expect(await row.textContent()).toContain(pending.pending.message);
    expect(await row.textContent()).toMatch(/in (59 min|1 h)/); // ETA: when big-run is expected to end
    const running = page.locator(`#running-table tr[data-job="${big.id}"]`);
    expect(await running.textContent()).toContain('h100-80gb');
    expect(await running.textContent()).toContain('Admitted');
    await screenshot(page, 'queue-member');

    // Filters: the flavor filter keeps it; another flavor hides it (and says so).
    await page.getByLabel('Flavor').selectOption('trn1');
    await page.getByText('No pending jobs match these filters.').waitFor();
    expect(page.url()).toContain('flavor=trn1');
    await page.getByLabel('Flavor').selectOption('h100-80gb');
    await row.waitFor();

    await row.getByRole('link', { name: 'llama-ft' }).click();
    await page.getByRole('heading', { level: 1, name: /llama-ft/ }).waitFor();
    expect(page.url()).toBe(`${s.url}/ui/jobs/${llama.id}`);
    const reason = page.locator('#pending-reason');
    expect(await reason.textContent()).toContain('Team quota is used up');
    expect(await reason.textContent()).toContain('Position 1 in the queue');
    expect(await reason.textContent()).toContain('Estimated start');
    await page.locator('dd', { hasText: '0 (class standard), preemptible' }).waitFor();
    await screenshot(page, 'job-pending');

    // big-run ends; the next cycle admits llama-ft. The open page shows it without a reload.
    await s.ok('POST', `/v1/jobs/${big.id}/status`, { state: 'RUNNING' });
    await s.ok('POST', `/v1/jobs/${big.id}/status`, { state: 'SUCCEEDED' });
    await cycle();
    await page.getByRole('heading', { level: 1, name: /llama-ft\s*Admitted/ }).waitFor();
    const placement = page.locator('#placement-table');
    await placement.waitFor();
    expect(await placement.textContent()).toMatch(/zone us-east-1a › block b[12] › domain nvl-[12]/);
    expect(await placement.textContent()).toMatch(/h100-(a1|a2|b1)/);
    expect(await page.locator('#timeline li').allTextContents()).toEqual([
      expect.stringContaining('Pending'),
      expect.stringContaining('Admitted'),
    ]);
    await page.locator('#events-table').getByText('job.admitted').waitFor();
    await screenshot(page, 'job-admitted');

    // Cancel from the UI: ask, confirm.
    await page.getByRole('button', { name: 'Cancel job…' }).click();
    await page.getByRole('button', { name: 'Yes, cancel the job' }).click();
    await page.getByRole('heading', { level: 1, name: /llama-ft\s*Cancelled/ }).waitFor();
    expect((await s.ok('GET', `/v1/jobs/${llama.id}`)).state).toBe('CANCELLED');
    expect(await page.locator('#timeline li').last().textContent()).toContain('cancelled by alice');
    expect(await page.getByRole('button', { name: 'Cancel job…' }).count()).toBe(0);
  });

  it("a member does not see another team's jobs", async () => {
    // nlp takes 16 H100s and 32 Trainium; vision's 2 × 8 then waits for capacity (h100-b2 is cordoned).
    await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({
        name: 'nlp-pretrain',
        team: 'nlp',
        replicas: 2,
        acceleratorsPerReplica: 16,
        flavors: ['trn1'],
        expectedRuntimeSeconds: 36000,
      }),
    );
    const theirs = await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({ name: 'nlp-secret-run', team: 'nlp', replicas: 2, expectedRuntimeSeconds: 5400 }),
    );
    await cycle();
    const mine = await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({ name: 'vision-eval', kind: 'eval', replicas: 2 }),
      alice,
    );
    await cycle();
    expect((await s.ok('GET', `/v1/jobs/${theirs.id}`)).state).toBe('ADMITTED');
    const code = (await s.ok('GET', `/v1/jobs/${mine.id}`)).pending.code as string;
    const page = await open();
    await signIn(page, alice, '/ui/queue');
    await page.locator(`#pending-table tr[data-job="${mine.id}"]`).waitFor();
    await page.getByText('No admitted and running jobs.').waitFor();
    expect(await page.textContent('main')).not.toContain('nlp-');
    expect(await page.getByLabel('Team').locator('option').allTextContents()).toEqual([
      'All my teams',
      'vision',
    ]);
    // The overview counts the member's teams only.
    await go(page, 'Overview');
    await page.getByText('your teams (vision)', { exact: false }).waitFor();
    // A direct link to the other team's job: answered as a missing job (its id is not confirmed), in words.
    await page.goto(`${s.url}/ui/jobs/${theirs.id}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Error 404');
    expect(await alert.textContent()).toContain(`job ${theirs.id} does not exist`);
    expect(await page.textContent('main')).not.toContain('nlp-secret-run');
    // The admin sees both.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, ADMIN_TOKEN, '/ui/queue');
    await page.locator(`#running-table tr[data-job="${theirs.id}"]`).waitFor();
    await page.locator(`#pending-table tr[data-job="${mine.id}"]`).waitFor();
    await screenshot(page, 'queue-admin');
    await go(page, 'Nodes');
    await page.locator('[data-node^="trn1-"]').filter({ hasText: '16/16' }).first().waitFor();
    await screenshot(page, 'nodes-busy');
    await go(page, 'Overview');
    await page.getByRole('row', { name: new RegExp(code) }).waitFor();
    await page
      .getByRole('row', { name: /^h100-80gb/ })
      .filter({ hasText: '16' })
      .waitFor();
    await screenshot(page, 'overview-admin');
  });

  it('an admin edits a quota, sees the audit entry; bad input is refused with the field named and changes nothing', async () => {
    const page = await open();
    await signIn(page, ADMIN_TOKEN, '/ui/teams');
    await page.getByRole('heading', { name: 'Edit a quota' }).waitFor();
    await page.locator('#q-team').selectOption('vision');
    await page.locator('#q-flavor').selectOption('h100-80gb');
    expect(await page.getByRole('textbox', { name: 'Nominal' }).inputValue()).toBe('16');

    const auditBefore = (await s.ok('GET', '/v1/audit')).items.length;
    await page.getByRole('textbox', { name: 'Nominal' }).fill('-4');
    await page.getByRole('button', { name: 'Save quota' }).click();
    const refused = page.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('nominal must be ≥ 0');
    expect((await s.ok('GET', '/v1/audit')).items.length).toBe(auditBefore);

    await page.getByRole('textbox', { name: 'Nominal' }).fill('24');
    await page.getByRole('textbox', { name: 'Borrowing limit' }).fill('8');
    await page.getByRole('button', { name: 'Save quota' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const entry = page.locator('#audit-table tbody tr').first();
    await entry.filter({ hasText: 'nominal 24' }).waitFor();
    expect(await entry.textContent()).toContain('vision');
    expect(await entry.textContent()).toContain('h100-80gb');
    expect(await entry.textContent()).toContain('admin');
    expect(await entry.textContent()).toContain(
      'nominal 16, borrow 0, lend no limit → nominal 24, borrow 8, lend no limit',
    );
    const team = await s.ok('GET', '/v1/teams/vision');
    expect(team.quotas.find((q: { flavor: string }) => q.flavor === 'h100-80gb')).toMatchObject({
      nominal: 24,
      borrowingLimit: 8,
      lendingLimit: null,
      cpuMillisLimit: null,
    });

    // A CPU cap (ADR 0026) is set here too, shown beside the use, and kept by a later edit of the nominal alone.
    await page.getByRole('textbox', { name: 'CPU limit' }).fill('4000000');
    await page.getByRole('button', { name: 'Save quota' }).click();
    await page.locator('[data-team="vision"]').getByRole('row', { name: /^h100-80gb/ }).filter({ hasText: '/ 4,000 cores' }).waitFor();
    await page.getByRole('textbox', { name: 'Nominal' }).fill('25');
    await page.getByRole('button', { name: 'Save quota' }).click();
    await page.locator('#audit-table tbody tr').first().filter({ hasText: 'nominal 25' }).waitFor();
    expect((await s.ok('GET', '/v1/teams/vision')).quotas.find((q: { flavor: string }) => q.flavor === 'h100-80gb')).toMatchObject({
      nominal: 25,
      cpuMillisLimit: 4_000_000,
    });
    await page.getByRole('textbox', { name: 'Nominal' }).fill('24');
    await page.getByRole('textbox', { name: 'CPU limit' }).fill('');
    await page.getByRole('button', { name: 'Save quota' }).click();
    await page.locator('#audit-table tbody tr').first().filter({ hasText: 'nominal 25, borrow 8, lend no limit → nominal 24' }).waitFor();
    expect((await s.ok('GET', '/v1/teams/vision')).quotas.find((q: { flavor: string }) => q.flavor === 'h100-80gb')).toMatchObject({
      nominal: 24,
      cpuMillisLimit: null,
    });
    const audit = await s.ok('GET', '/v1/audit');
    expect(audit.items[0]).toMatchObject({
      kind: 'quota.updated',
      team: 'vision',
      actor: 'admin',
      data: { flavor: 'h100-80gb' },
    });
    await page.locator('[data-team="vision"] canvas').waitFor();
    await screenshot(page, 'teams-admin');

    // A member reads the teams and their own audit trail, and gets no edit form.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, alice, '/ui/teams');
    await page.locator('#audit-table').getByText('nominal 24').first().waitFor();
    expect(await page.getByRole('heading', { name: 'Edit a quota' }).count()).toBe(0);
  });

  it('usage: accelerator-hours and cost per team over time, a CSV download; budgets set by an admin, with their use and audit entry', async () => {
    // Earlier tests held accelerators: vision (big-run, llama-ft) and nlp (nlp-pretrain, nlp-secret-run).
    const day = new Date().toISOString().slice(0, 10);
    const report = await s.ok('GET', `/v1/usage?groupBy=team,flavor&from=${day}`);
    const vision = report.items.find(
      (i: { team: string; flavor: string }) => i.team === 'vision' && i.flavor === 'h100-80gb',
    );
    expect(vision.acceleratorHours).toBeGreaterThan(0);
    const page = await open();
    await signIn(page, ADMIN_TOKEN, '/ui/usage');
    const table = page.locator('#usage-table');
    await table.waitFor();
    for (const [team, flavor] of [
      ['vision', 'h100-80gb'],
      ['nlp', 'h100-80gb'],
      ['nlp', 'trn1'],
    ]) {
      await table.getByRole('row', { name: new RegExp(`^${team} ${flavor}`) }).waitFor();
    }
    expect(await page.locator('canvas[role=img]').count()).toBe(2);
    expect(await page.locator('canvas[role=img]').first().getAttribute('aria-label')).toContain(
      'stacked by team',
    );
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: /Download CSV/ }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^quartermaster-usage-.*\.csv$/);
    const csv = readFileSync(await file.path(), 'utf8');
    expect(csv.split('\n')[0]).toContain('accelerator_hours');
    expect(csv).toContain(`vision,h100-80gb,${day}`);
    await screenshot(page, 'usage-admin');

    // A budget, set on the Teams page, shows its use this period and lands in the audit trail.
    await go(page, 'Teams');
    await page.getByRole('heading', { name: 'Set a budget' }).waitFor();
    await page.locator('#b-period').selectOption('month');
    await page.locator('#b-team').selectOption('vision');
    await page.locator('#b-limit').fill('1000');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.getByRole('status').filter({ hasText: "vision's month budget" }).waitFor();
    const row = page.locator('#budgets-table tr[data-budget="vision/month"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('of 1,000 accelerator-hours');
    expect(await row.textContent()).toMatch(/^vision\s*month.*\d\.\d\d accelerator-hours of/);
    expect(await row.locator('meter').getAttribute('max')).toBe('1000');
    // What a used-up budget does to running jobs is said, not left to guess (block and warn: they go on).
    expect(await row.locator('[data-running-jobs="continue"]').textContent()).toContain('warn: running jobs go on');
    expect(await page.locator('#b-action option[value="stop"]').textContent()).toBe('stop: block new jobs and stop running ones');
    await page
      .locator('#audit-table tbody tr')
      .first()
      .filter({ hasText: 'none → 1,000 accelerator-hours, warn' })
      .waitFor();
    expect((await s.ok('GET', '/v1/teams/vision/budgets/month')).limit).toBe(1000);
    await screenshot(page, 'teams-budgets');

    // A member sees only their teams' usage.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, alice, '/ui/usage');
    await table.getByRole('row', { name: /^vision h100-80gb/ }).waitFor();
    expect(await table.textContent()).not.toContain('nlp');
    expect(await page.getByLabel('Team').locator('option').allTextContents()).toEqual([
      'All my teams',
      'vision',
    ]);
  });

  it('history: a chart per flavor of what it offered, held and was asked, the same figures as a table; a member sees their own team only', async () => {
    // The scheduler's leader records this once a minute; here the same recorder, over the service's database.
    const db = new Database(s.db.url, { poolSize: 1 });
    try {
      expect(await recordFleetHistory(db.pool, new Date())).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
    const page = await open();
    await signIn(page, ADMIN_TOKEN, '/ui/history');
    await page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
    const table = page.locator('#history-table');
    await table.locator('tbody tr').first().waitFor();
    const rowTeams = (): Promise<string[]> => page.evaluate<string[]>(`[...document.querySelectorAll('#history-table tbody tr')].map((r) => r.dataset.team)`);
    const teams = await rowTeams();
    expect(new Set(teams)).toEqual(new Set(['', 'nlp', 'vision']));
    const whole = table.locator('tbody tr[data-team=""]', { hasText: 'h100-80gb' });
    expect(await whole.locator('td').allTextContents()).toEqual(expect.arrayContaining(['h100-80gb', 'all teams']));
    await page.getByRole('heading', { name: 'h100-80gb: offered, held and asked' }).waitFor();
    expect(await page.locator('main canvas').count()).toBeGreaterThan(0);
    await screenshot(page, 'history-admin');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, alice, '/ui/history');
    await table.locator('tbody tr').first().waitFor();
    const mine = await rowTeams();
    expect(new Set(mine)).toEqual(new Set(['', 'vision']));
  });

  it('is readable on a phone: no sideways scrolling of the page, navigation reachable', async () => {
    const page = await open(PHONE);
    await signIn(page, alice);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByRole('row', { name: /^h100-80gb/ }).waitFor();
    for (const [link, name] of [
      ['Overview', 'overview-phone'],
      ['Queue', 'queue-phone'],
      ['Teams', 'teams-phone'],
      ['Nodes', 'nodes-phone'],
      ['Usage', 'usage-phone'],
      ['History', 'history-phone'],
    ] as const) {
      await go(page, link);
      await page.waitForLoadState('networkidle');
      // Elements sticking out past the phone's width (outside the tables' own scroll boxes).
      const wide = await page.evaluate<string[]>(`(() => {
        const width = ${PHONE.width};
        if (document.documentElement.scrollWidth <= width) return [];
        return [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > width + 1 && !e.closest('.scroll'))
          .slice(0, 5)
          .map((e) => e.tagName.toLowerCase() + '.' + e.className + ' → ' + Math.round(e.getBoundingClientRect().right) + ' px');
      })()`);
      expect({ page: link, wide }).toEqual({ page: link, wide: [] });
      await screenshot(page, name);
    }
  });
});
