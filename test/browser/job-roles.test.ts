import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
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

/** A multi-role gang over REST (ADR 0024): `roles` instead of replicas and acceleratorsPerReplica. */
function gangBody(overrides: Record<string, unknown>): Record<string, unknown> {
  const { replicas: _replicas, acceleratorsPerReplica: _accelerators, ...rest } = jobBody(overrides);
  return rest;
}

describe('the job page of a multi-role gang, in Debian chromium against the real API', () => {
  let s: ConsoleService;
  let browser: Browser;
  let alice: string;
  let context: BrowserContext | null = null;
  let errors: string[] = [];

  beforeAll(async () => {
    s = await startConsoleService('browser_job_roles');
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

  const openJob = async (token: string, id: string): Promise<Page> => {
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    errors = collectPageErrors(page);
    await page.goto(`${s.url}/ui/jobs/${id}`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    return page;
  };
  /** A row's cells as shown, header cell first. */
  const cells = async (page: Page, row: string): Promise<string[]> =>
    (await page.locator(row).locator('th, td').allTextContents()).map((t) => t.trim());

  it('shows the roles as asked while pending, then admitted of asked and the nodes each role is on', async () => {
    // vision holds 16 H100s of quota: 2 workers × 8 take it all; the CPU-only driver is charged nothing.
    const gang = await s.ok(
      'POST',
      '/v1/jobs',
      gangBody({
        name: 'ray-train',
        roles: [
          { name: 'driver', replicas: 1, acceleratorsPerReplica: 0, cpuMillis: 4000, memoryMiB: 16384 },
          {
            name: 'worker',
            replicas: 2,
            minReplicas: 1,
            acceleratorsPerReplica: 8,
            cpuMillis: 32000,
            memoryMiB: 262144,
          },
        ],
      }),
      alice,
    );
    expect(gang.state).toBe('PENDING');

    // Before any cycle: pending, the figures as asked, no nodes column.
    const page = await openJob(alice, gang.id);
    await page.getByRole('heading', { level: 1, name: /ray-train\s*Pending/ }).waitFor();
    const roles = page.getByRole('table', { name: /Roles of this gang/ });
    await roles.waitFor();
    expect((await roles.locator('thead th').allTextContents()).map((t) => t.trim())).toEqual([
      'role',
      'replicas',
      'at least',
      'accelerators per replica',
      'CPU per replica',
      'memory per replica',
    ]);
    expect(await cells(page, '#roles-table tr[data-role="driver"]')).toEqual([
      'driver',
      '1',
      '1',
      '0',
      '4 CPU',
      '16 GiB',
    ]);
    expect(await cells(page, '#roles-table tr[data-role="worker"]')).toEqual([
      'worker',
      '2',
      '1',
      '8',
      '32 CPU',
      '256 GiB',
    ]);
    // The size counts each role's own accelerators, not the roles' envelope (3 × 8).
    await page.locator('dd', { hasText: '1 × 0 + 2 × 8 = 16 accelerators in 2 roles' }).waitFor();
    await screenshot(page, 'job-roles-pending');

    // A cycle admits it in full; the open page shows it without a reload.
    await s.ok('POST', '/v1/scheduler/cycles');
    const admitted = await s.ok('GET', `/v1/jobs/${gang.id}`);
    expect(admitted.state).toBe('ADMITTED');
    const nodesOf = (role: string): string =>
      [
        ...new Set(
          (admitted.allocation as { replica: number; role: string; node: string }[])
            .filter((a) => a.role === role)
            .sort((a, b) => a.replica - b.replica)
            .map((a) => a.node),
        ),
      ].join(', ');
    expect(nodesOf('worker')).toMatch(/^h100-(a1|a2|b1), h100-(a1|a2|b1)$/);
    await page.getByRole('heading', { level: 1, name: /ray-train\s*Admitted/ }).waitFor();
    await page.locator('#roles-table thead th', { hasText: 'nodes' }).waitFor();
    expect(await roles.locator('thead th').nth(1).textContent()).toBe('replicas admitted / asked');
    expect(await cells(page, '#roles-table tr[data-role="driver"]')).toEqual([
      'driver',
      '1 / 1',
      '1',
      '0',
      '4 CPU',
      '16 GiB',
      nodesOf('driver'),
    ]);
    expect(await cells(page, '#roles-table tr[data-role="worker"]')).toEqual([
      'worker',
      '2 / 2',
      '1',
      '8',
      '32 CPU',
      '256 GiB',
      nodesOf('worker'),
    ]);

    // The placement names each replica's role beside its node.
    const placement = page.locator('#placement-table');
    await placement.waitFor();
    expect((await placement.locator('thead th').allTextContents()).map((t) => t.trim())).toEqual([
      'topology domain',
      'node',
      'role',
      'replica',
      'accelerators',
    ]);
    const placed = await page.evaluate<string[][]>(
      `[...document.querySelectorAll('#placement-table tbody tr')].map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent.trim()))`,
    );
    // A row per node and role: node, role, its replicas there, their accelerators (the domain is a row header).
    const want = new Map<string, { node: string; role: string; replicas: number[]; accelerators: number }>();
    for (const a of admitted.allocation as {
      replica: number;
      role: string;
      node: string;
      accelerators: number;
    }[]) {
      const row = want.get(`${a.node}/${a.role}`) ?? {
        node: a.node,
        role: a.role,
        replicas: [],
        accelerators: 0,
      };
      row.replicas.push(a.replica);
      row.accelerators += a.accelerators;
      want.set(`${a.node}/${a.role}`, row);
    }
    const rowText = (node: string, role: string, replicas: number[], accelerators: number): string =>
      [node, role, [...replicas].sort((x, y) => x - y).join(', '), String(accelerators)].join(' | ');
    expect(
      placed
        .map(([node, role, reps, accelerators]) =>
          rowText(node!, role!, reps!.split(', ').map(Number), Number(accelerators)),
        )
        .sort(),
    ).toEqual([...want.values()].map((w) => rowText(w.node, w.role, w.replicas, w.accelerators)).sort());
    await screenshot(page, 'job-roles-admitted');
  });

  it('a job of one role has no roles table and no role column', async () => {
    const solo = await s.ok(
      'POST',
      '/v1/jobs',
      jobBody({ name: 'solo-run', team: 'nlp', flavors: ['trn1'], replicas: 2, acceleratorsPerReplica: 16 }),
    );
    await s.ok('POST', '/v1/scheduler/cycles');
    expect((await s.ok('GET', `/v1/jobs/${solo.id}`)).state).toBe('ADMITTED');
    const page = await openJob(ADMIN_TOKEN, solo.id);
    await page.getByRole('heading', { level: 1, name: /solo-run\s*Admitted/ }).waitFor();
    await page.locator('#placement-table').waitFor();
    await page.locator('dd', { hasText: '2 × 16 = 32 accelerators' }).waitFor();
    expect(await page.locator('#roles-table').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Roles' }).count()).toBe(0);
    expect((await page.locator('#placement-table thead th').allTextContents()).map((t) => t.trim())).toEqual([
      'topology domain',
      'node',
      'replica',
      'accelerators',
    ]);
    expect(await page.locator('dd', { hasText: 'roles' }).count()).toBe(0);
  });
});
