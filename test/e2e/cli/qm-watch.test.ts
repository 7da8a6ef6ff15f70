import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Harness, jobBody, memberToken, seedTenancy, startHarness } from '../api/harness.js';
import { buildQm, runQm, startQm } from './qm-process.js';

/**
 * `--watch` (-w) of the real `qm`: it polls the API every --interval, prints again only when what it shows
 * changed (under a `# HH:MM:SS UTC` line), reports a failing server on stderr and keeps trying, and ends
 * with exit 0 on SIGTERM or Ctrl-C (SIGINT). Every wait is a bounded poll on the child's output.
 */
let h: Harness;
let member: Record<string, string>;

const STAMP = /^# \d\d:\d\d:\d\d UTC$/gm;
const stamps = (text: string): number => (text.match(STAMP) ?? []).length;

async function until(what: string, check: () => boolean | Promise<boolean>, detail: () => string = () => ''): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}${detail() ? `: ${detail()}` : ''}`);
}

/** In front of the API: forwards every request, or answers 503 problem+json while `failing`; counts requests. */
interface Proxy {
  url: string;
  failing: boolean;
  served: number;
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const proxy = { failing: false, served: 0 } as Proxy;
  const server: Server = createServer((req, res) => {
    void (async () => {
      proxy.served++;
      if (proxy.failing) {
        res.writeHead(503, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ type: 'urn:quartermaster:problem:unavailable', title: 'Service Unavailable', status: 503, code: 'UNAVAILABLE', detail: 'the database does not answer', errors: [] }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const k of ['authorization', 'accept', 'content-type']) if (typeof req.headers[k] === 'string') headers[k] = req.headers[k];
      const r = await fetch(`${target}${req.url ?? '/'}`, { method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' });
      res.end(Buffer.from(await r.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.close = () => new Promise((resolve) => server.close(() => resolve()));
  return proxy;
}

beforeAll(async () => {
  buildQm();
  h = await startHarness('cli_qm_watch');
  await seedTenancy(h);
  const dir = mkdtempSync(join(tmpdir(), 'qm-watch-'));
  member = { QM_SERVER: h.url, QM_TOKEN: await memberToken(h, 'alice', ['vision']), XDG_CONFIG_HOME: join(dir, 'config'), QM_TEAM: 'vision' };
});
afterAll(async () => {
  await h?.close();
});

describe('qm ls --watch', () => {
  it('prints the table, again only after a change; a failing server is retried with a note on stderr; SIGTERM ends it with exit 0', async () => {
    const job = await h.ok('POST', '/v1/jobs', jobBody({ name: 'watched' }));
    const proxy = await startProxy(h.url);
    try {
      const run = startQm(['ls', '-w', '--interval', '1'], { env: { ...member, QM_SERVER: proxy.url } });
      const show = (): string => `stdout ${JSON.stringify(run.output())}, stderr ${JSON.stringify(run.errors())}`;
      await until('the first table', () => run.output().includes('watched'), show);
      const first = run.output().split('\n');
      expect(first[0]).toMatch(/^# \d\d:\d\d:\d\d UTC$/);
      expect(first[1]!.split(/\s+/)).toEqual(['ID', 'NAME', 'TEAM', 'STATE', 'FLAVOR', 'REPLICAS', 'AGE', 'POSITION', 'ETA']);
      expect(first[2]).toMatch(new RegExp(`^${job.id} +watched +vision +PENDING +`));
      // Three more polls without a change (the proxy counts them): nothing new is printed.
      const seen = proxy.served;
      await until('three more polls', () => proxy.served >= seen + 3, show);
      expect(stamps(run.output())).toBe(1);

      await h.ok('DELETE', `/v1/jobs/${job.id}`);
      await until('the table after the cancel', () => stamps(run.output()) === 2 && run.output().includes('CANCELLED'), show);
      const second = run.output().split('\n\n')[1]!.split('\n');
      expect(second[0]).toMatch(/^# \d\d:\d\d:\d\d UTC$/);
      expect(second[2]).toMatch(new RegExp(`^${job.id} +watched +vision +CANCELLED +`));

      proxy.failing = true;
      await until('the note about the failing server', () => run.errors().includes('retrying'), show);
      expect(run.errors()).toBe('qm: server error (HTTP 503): the database does not answer (retrying every 1 s; Ctrl-C stops)\n');
      proxy.failing = false;
      await until('the note that it answers again', () => run.errors().includes('answers again'), show);
      run.kill('SIGTERM');
      const r = await run.result;
      expect(r.code).toBe(0);
      expect(stamps(r.stdout)).toBe(2);
      expect(r.stderr).toBe('qm: server error (HTTP 503): the database does not answer (retrying every 1 s; Ctrl-C stops)\nqm: the API answers again\n');
    } finally {
      await proxy.close();
    }
  });

  it('-o name --watch prints the names again when the set changes; Ctrl-C (SIGINT) ends it with exit 0', async () => {
    const run = startQm(['ls', '--state', 'pending', '-o', 'name', '--watch', '--interval', '1'], { env: member });
    const show = (): string => `stdout ${JSON.stringify(run.output())}, stderr ${JSON.stringify(run.errors())}`;
    await until('the note that there are none', () => run.errors().includes('no jobs'), show);
    expect(run.output()).toBe('');
    const first = await h.ok('POST', '/v1/jobs', jobBody({ name: 'first-watched' }));
    await until('the first name', () => run.output() === 'job/first-watched\n', show);
    const second = await h.ok('POST', '/v1/jobs', jobBody({ name: 'second-watched' }));
    await until('both names', () => run.output() === 'job/first-watched\njob/second-watched\njob/first-watched\n', show);
    run.kill('SIGINT');
    const r = await run.result;
    expect(r).toMatchObject({ code: 0, stderr: 'no jobs in team vision in state pending\n' });
    for (const j of [first, second]) await h.ok('DELETE', `/v1/jobs/${j.id}`);
  });

  it('--interval below 1 s or without --watch is a usage error (exit 2)', async () => {
    expect(await runQm(['ls', '-w', '--interval', '0.5'], { env: member })).toMatchObject({ code: 2, stdout: '', stderr: "qm: --interval '0.5': must be at least 1 second\n" });
    expect(await runQm(['ls', '--interval', '5'], { env: member })).toMatchObject({ code: 2, stdout: '', stderr: 'qm: --interval only applies with --watch (-w)\n' });
    expect(await runQm(['queue', '-w', '--interval', 'soon'], { env: member })).toMatchObject({ code: 2, stderr: "qm: --interval 'soon': expected seconds, e.g. 2 (or 2s, 1m)\n" });
  });
});

describe('single-job views and the queue --watch', () => {
  it('qm describe JOB -w prints the job again once it is admitted; SIGTERM: exit 0', async () => {
    const job = await h.ok('POST', '/v1/jobs', jobBody({ name: 'described', replicas: 1, acceleratorsPerReplica: 8 }));
    const run = startQm(['describe', 'described', '-w', '--interval', '1'], { env: member });
    const show = (): string => `stdout ${JSON.stringify(run.output())}, stderr ${JSON.stringify(run.errors())}`;
    await until('the description', () => run.output().includes('State:        PENDING'), show);
    expect(run.output()).toMatch(/^# \d\d:\d\d:\d\d UTC\nName: +described\nID: +[0-9a-f-]{36}\n/);
    await h.ok('POST', '/v1/scheduler/cycles');
    expect((await h.ok('GET', `/v1/jobs/${job.id}`)).state).toBe('ADMITTED');
    await until('the admitted job', () => run.output().includes('State:        ADMITTED'), show);
    run.kill('SIGTERM');
    const r = await run.result;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(stamps(r.stdout)).toBeGreaterThanOrEqual(2);
    await h.ok('DELETE', `/v1/jobs/${job.id}`);
  });

  it('qm why JOB --watch and qm queue -w follow the same job through a scheduling cycle', async () => {
    const job = await h.ok('POST', '/v1/jobs', jobBody({ name: 'queued', replicas: 1, acceleratorsPerReplica: 4 }));
    const why = startQm(['why', 'queued', '--watch', '--interval', '1'], { env: member });
    const queue = startQm(['queue', '-w', '--interval', '1', '--no-headers'], { env: member });
    const show = (): string => `why ${JSON.stringify(why.output())}, queue ${JSON.stringify(queue.output())}, stderr ${JSON.stringify(why.errors() + queue.errors())}`;
    await until('both first views', () => why.output().includes('reason: not yet considered') && queue.output().includes('queued'), show);
    expect(queue.output()).toMatch(/^- +queued +vision +0 +- +-\n/m);
    expect(stamps(queue.output())).toBe(0);
    await h.ok('POST', '/v1/scheduler/cycles');
    expect((await h.ok('GET', `/v1/jobs/${job.id}`)).state).toBe('ADMITTED');
    await until('why: admitted', () => why.output().includes('vision/queued') && why.output().includes(') is ADMITTED'), show);
    await until('the queue without it', () => queue.errors().includes('no pending jobs'), show);
    why.kill('SIGTERM');
    queue.kill('SIGTERM');
    const [w, q] = await Promise.all([why.result, queue.result]);
    expect({ code: w.code, stderr: w.stderr }).toEqual({ code: 0, stderr: '' });
    expect(w.stdout).toMatch(/^# \d\d:\d\d:\d\d UTC\nvision\/queued \([0-9a-f-]{36}\) is PENDING/);
    expect(stamps(w.stdout)).toBe(2);
    expect(q).toMatchObject({ code: 0, stdout: expect.stringMatching(/^- +queued +vision +0 +- +-\n$/), stderr: 'no pending jobs\n' });
  });
});
