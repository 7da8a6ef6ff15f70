// `npm run bench:api:list`: what `GET /v1/jobs?limit=500` costs the API process when every job carries a pod
// template near QM_MAX_TEMPLATE_BYTES (issue #27: 200 jobs of ~0.9 MiB templates made one page 180 MB and the
// API's memory grow from 331 MiB to 1.3 GiB). Prints one JSON line.
//
// 1. a fresh database (migrated), the built API started as a child process on a free port;
// 2. a team with its submission limits lifted, a member token, JOBS jobs each with a template of
//    TEMPLATE_BYTES as stored (default: the configured maximum, 64 KiB);
// 3. the API's peak RSS is reset (/proc/<pid>/clear_refs), then ROUNDS rounds of CONCURRENCY parallel
//    `GET /v1/jobs?limit=500` as the member; RSS is also sampled every 5 ms;
// 4. figures: bytes of one list page, of `GET /v1/queue?limit=500` and of one `GET /v1/jobs/{id}` (which
//    has the template), list latency, and the API's RSS (started, after the submissions, peak while listing, after).
// Env: JOBS (500), TEMPLATE_BYTES (QM_MAX_TEMPLATE_BYTES or 65536), ROUNDS (10), CONCURRENCY (4),
// QM_MAX_TEMPLATE_BYTES (passed to the API).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { call, freePort, startApiProcess } from './api-process.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const MAX_TEMPLATE_BYTES = Number(process.env['QM_MAX_TEMPLATE_BYTES'] ?? 65_536);
const JOBS = Number(process.env['JOBS'] ?? 500);
const TEMPLATE_BYTES = Number(process.env['TEMPLATE_BYTES'] ?? MAX_TEMPLATE_BYTES);
const ROUNDS = Number(process.env['ROUNDS'] ?? 10);
const CONCURRENCY = Number(process.env['CONCURRENCY'] ?? 4);
const LIMIT = 500;
const ADMIN = `bench-admin-${randomUUID()}`;

/** VmRSS and VmHWM (peak RSS) of a process, in MiB, from /proc (Linux). */
function memory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: mib(kb('VmRSS') * 1024), peakMiB: mib(kb('VmHWM') * 1024) };
}

const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** Resets the process's peak RSS (VmHWM) to its current RSS; false where the kernel does not allow it. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}


/** A GET's status, body size in bytes and wall time. */
async function fetchSize(url: string, token: string): Promise<{ bytes: number; ms: number; body: Buffer }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`GET ${url} → ${res.status} ${body.toString('utf8', 0, 500)}`);
  return { bytes: body.length, ms: performance.now() - started, body };
}

/** A template whose stored JSON (defaults filled in) is `bytes` long: env values of at most 32,768 characters. */
function templateOfSize(bytes: number): Record<string, unknown> {
  const env: Record<string, string> = {};
  const stored = (): string => JSON.stringify({ image: 'ghcr.io/acme/llama:1', env, cpuMillis: 8000, memoryMiB: 65536 });
  for (let i = 0; stored().length < bytes; i++) {
    env[`BLOB_${i}`] = '';
    env[`BLOB_${i}`] = 'x'.repeat(Math.max(0, Math.min(32_768, bytes - stored().length)));
  }
  return { image: 'ghcr.io/acme/llama:1', env, cpuMillis: 8000, memoryMiB: 65536 };
}

async function inParallel(n: number, count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

const percentile = (sorted: number[], p: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 10) / 10;

async function main(): Promise<void> {
  const db = await createTestDatabase({ label: 'bench_job_list' });
  let child: ChildProcess | undefined;
  try {
    const port = await freePort();
    child = await startApiProcess(db.url, port, ADMIN, { QM_MAX_TEMPLATE_BYTES: String(MAX_TEMPLATE_BYTES) });
    const pid = child.pid!;
    const base = `http://127.0.0.1:${port}`;
    const started = memory(pid);
    await call(base, ADMIN, 'PUT', '/v1/cohorts/research', {});
    await call(base, ADMIN, 'PUT', '/v1/flavors/h100-80gb', { kind: 'nvidia-gpu' });
    await call(base, ADMIN, 'PUT', '/v1/teams/vision', { cohort: 'research', limits: { maxPendingJobs: 10_000_000, submissionsPerSecond: 1_000_000 } });
    await call(base, ADMIN, 'PUT', '/v1/teams/vision/quotas/h100-80gb', { nominal: 64 });
    const { token } = (await call(base, ADMIN, 'POST', '/v1/tokens', { subject: 'bench', role: 'member', teams: ['vision'] })) as { token: string };

    const template = templateOfSize(TEMPLATE_BYTES);
    const ids: string[] = [];
    await inParallel(8, JOBS, async (i) => {
      const job = (await call(base, token, 'POST', '/v1/jobs', {
        name: `big-${i}`,
        team: 'vision',
        replicas: 1,
        acceleratorsPerReplica: 8,
        flavors: ['h100-80gb'],
        template,
      })) as { id: string };
      ids.push(job.id);
    });
    const seeded = memory(pid);

    const peakReset = resetPeak(pid);
    let sampledPeakMiB = memory(pid).rssMiB;
    const sampler = setInterval(() => {
      sampledPeakMiB = Math.max(sampledPeakMiB, memory(pid).rssMiB);
    }, 5);
    const times: number[] = [];
    let listBytes = 0;
    let items = 0;
    let listCarriesTemplates = false;
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          const page = await fetchSize(`${base}/v1/jobs?limit=${LIMIT}`, token);
          times.push(page.ms);
          listBytes = Math.max(listBytes, page.bytes);
          const parsed = JSON.parse(page.body.toString('utf8')) as { items: Record<string, unknown>[] };
          items = parsed.items.length;
          listCarriesTemplates ||= parsed.items.some((j) => 'template' in j);
        }),
      );
    }
    clearInterval(sampler);
    const afterList = memory(pid);
    const queue = await fetchSize(`${base}/v1/queue?limit=${LIMIT}`, token);
    const detail = await fetchSize(`${base}/v1/jobs/${ids[0]}`, token);
    times.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        bench: 'job-list',
        jobs: JOBS,
        templateBytes: TEMPLATE_BYTES,
        maxTemplateBytes: MAX_TEMPLATE_BYTES,
        limit: LIMIT,
        itemsPerPage: items,
        listCarriesTemplates,
        listResponseBytes: listBytes,
        listBytesPerJob: Math.round(listBytes / Math.max(1, items)),
        queueResponseBytes: queue.bytes,
        jobResponseBytes: detail.bytes,
        listRequests: times.length,
        concurrency: CONCURRENCY,
        listP50Ms: percentile(times, 0.5),
        listMaxMs: percentile(times, 1),
        rssMiB: {
          started: started.rssMiB,
          afterSubmissions: seeded.rssMiB,
          peakDuringSubmissions: seeded.peakMiB,
          peakWhileListing: peakReset ? Math.max(afterList.peakMiB, sampledPeakMiB) : sampledPeakMiB,
          afterListing: afterList.rssMiB,
        },
        peakWhileListingFrom: peakReset ? 'VmHWM reset before listing, and RSS sampled every 5 ms' : 'RSS sampled every 5 ms',
        loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
      }),
    );
  } finally {
    if (child) child.kill('SIGTERM');
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
