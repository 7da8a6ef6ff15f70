import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DEFAULT_OPTIONS, runBudgetedCycle, runCycle } from '#core';
import {
  acquireOrRenewLease,
  BudgetRepository,
  commitCycle,
  createTestDatabase,
  Database,
  FlavorRepository,
  JobRepository,
  loadSnapshot,
  loadSnapshotWithVersions,
  nextCycleNumber,
  periodOf,
  UsageLedgerRepository,
  type NewJob,
  type TestDatabase,
} from '#db';
import { PgCycleLock, PgReconcileStore } from '#scheduling';
import { type Dim, holdings, type JobHistory, recompute } from './recompute.js';

jest.setTimeout(120_000);

/**
 * The usage ledger against an independent recomputation from the jobs' own history, over a timeline
 * driven through the real write paths (scheduling cycles committed at chosen times, status reports,
 * cancellation, a gang-timeout requeue, a price change): preemption, requeue, cancel mid-run, failure,
 * price changes, and holdings across a UTC day and month boundary.
 */
const LEASE = 'qm-ledger-test';
let testDb: TestDatabase;
let db: Database;
let jobs: JobRepository;
let ledger: UsageLedgerRepository;
let token: bigint;

const H100 = 'h100-80gb';
const A100 = 'a100-80gb';

function job(name: string, over: Partial<NewJob> = {}): NewJob {
  return {
    name,
    team: 'vision',
    kind: 'training',
    priority: 0,
    preemptible: true,
    replicas: 1,
    minReplicas: 1,
    acceleratorsPerReplica: 8,
    cpuMillisPerReplica: 1000,
    memoryMiBPerReplica: 1024,
    flavors: [H100],
    flavorSelection: 'preference',
    speeds: null,
    topologyLevel: 'none',
    tpuShape: null,
    expectedRuntimeSeconds: 3600,
    template: { image: 'x' },
    ...over,
  };
}

/** Submits through the real path, then dates the submission back to `at` (jobs that waited since then). */
async function submit(name: string, at: number, over: Partial<NewJob> = {}): Promise<string> {
  const r = await jobs.submit(job(name, over), 'alice', null);
  if (r.kind !== 'created') throw new Error(`submit ${name}: ${r.kind}`);
  await db.pool.query('UPDATE jobs SET submitted_at = $2, queued_at = $2 WHERE id = $1', [r.job.id, new Date(at)]);
  await db.pool.query(`UPDATE job_transitions SET at = $2 WHERE job_id = $1 AND "from" IS NULL`, [r.job.id, new Date(at)]);
  return r.job.id;
}

/** One real scheduling cycle (snapshot → core → fenced commit) at time `now`. */
async function cycleAt(now: number): Promise<{ admitted: string[]; preempted: string[] }> {
  const { snapshot, versions } = await loadSnapshotWithVersions(db, now, DEFAULT_OPTIONS);
  const result = runCycle(snapshot);
  const out = await commitCycle(db, { result, now, versions, fencing: { leaseName: LEASE, token }, cycleNumber: await nextCycleNumber(db), leader: 'test' });
  return { admitted: out.admitted, preempted: out.preempted };
}

async function report(id: string, state: 'RUNNING' | 'SUCCEEDED' | 'FAILED'): Promise<void> {
  const r = await jobs.report(id, state, 'executor', `reported ${state}`);
  if (r.kind !== 'changed') throw new Error(`report ${state} of ${id}: ${r.kind}`);
}

async function history(id: string): Promise<JobHistory> {
  const detail = (await jobs.get(id))!;
  const events = await jobs.events(id);
  return { id, team: detail.team, transitions: detail.transitions, events };
}

const ids: Record<string, string> = {};
let now: Date;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'usage_ledger' });
  db = new Database(testDb.url, { poolSize: 4 });
  jobs = new JobRepository(db);
  ledger = new UsageLedgerRepository(db);
  const flavors = new FlavorRepository(db);
  await flavors.upsert(H100, { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 2, costPerHour: 4 }, 'test');
  await flavors.upsert(A100, { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 1, costPerHour: 2 }, 'test');
  const p = db.prisma;
  await p.cohort.create({ data: { name: 'research' } });
  await p.team.createMany({ data: [{ name: 'vision', cohort: 'research' }, { name: 'nlp', cohort: 'research' }] });
  await p.quota.createMany({
    data: [
      { team: 'vision', flavor: H100, nominal: 16, borrowingLimit: 0 },
      { team: 'vision', flavor: A100, nominal: 8 },
      { team: 'nlp', flavor: H100, nominal: 8 },
    ],
  });
  await p.node.createMany({
    data: [
      { name: 'h-1', flavor: H100, accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 },
      { name: 'h-2', flavor: H100, accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 },
      { name: 'a-1', flavor: A100, accelerators: 8, cpuMillis: 96000, memoryMiB: 1048576 },
    ],
  });
  token = (await acquireOrRenewLease(db, LEASE, 'test', 3_600_000)).fencingToken;

  const real = Date.now();
  const monthStart = periodOf('month', new Date(real)).start.getTime();
  const dayStart = periodOf('day', new Date(real)).start.getTime();
  const t1 = monthStart - 30 * 60_000; // last month
  const t2 = dayStart - 10 * 60_000; // yesterday (or, on the 1st, also last month)

  // Two preemptible jobs admitted last month, running across the month (and day) boundary…
  ids.a = await submit('a', t1 - 60_000);
  ids.b = await submit('b', t1 - 60_000);
  expect((await cycleAt(t1)).admitted.sort()).toEqual([ids.a, ids.b].sort());
  await report(ids.a, 'RUNNING');
  await report(ids.b, 'RUNNING');
  // …until a high-priority gang of the same team preempts both (wasted), and holds 16 h100s.
  ids.c = await submit('c', t2 - 60_000, { priority: 100, replicas: 2, minReplicas: 2 });
  const preempting = await cycleAt(t2);
  expect(preempting.admitted).toEqual([ids.c]);
  expect(preempting.preempted.sort()).toEqual([ids.a, ids.b].sort());
  await report(ids.c, 'RUNNING');
  // The h100 price changes while c runs; then c is cancelled mid-run (used, not wasted).
  await flavors.upsert(H100, { kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', nodeLabels: {}, memoryGiB: 80, relativeSpeed: 2, costPerHour: 6 }, 'test');
  await jobs.cancel(ids.c, 'alice');
  // a and b come back (requeued with their history); a succeeds, b fails (wasted).
  expect((await cycleAt(Date.now())).admitted.sort()).toEqual([ids.a, ids.b].sort());
  await report(ids.a, 'RUNNING');
  await report(ids.b, 'RUNNING');
  await report(ids.a, 'SUCCEEDED');
  await report(ids.b, 'FAILED');
  // d is admitted but never starts: the gang timeout requeues it (wasted), and it is admitted again (still holding).
  ids.d = await submit('d', Date.now() - 60_000, { flavors: [A100] });
  expect((await cycleAt(Date.now())).admitted).toEqual([ids.d]);
  const reconcile = new PgReconcileStore(db.pool, new PgCycleLock(db.pool));
  const requeued = await reconcile.requeueStuckAdmissions({ now: new Date(), admittedBefore: new Date(Date.now() + 1000), backoffMs: () => 0, fencing: { leaseName: LEASE, token } });
  expect(requeued.map((r) => r.jobId)).toEqual([ids.d]);
  await db.pool.query('UPDATE jobs SET queued_at = $2 WHERE id = $1', [ids.d, new Date(Date.now() - 1000)]); // its backoff is over
  expect((await cycleAt(Date.now())).admitted).toEqual([ids.d]);
  now = new Date(Date.now() + 1);
});

afterAll(async () => {
  await db?.close();
  await testDb?.drop();
});

describe('the usage ledger', () => {
  it('holds one row per holding, with its end state and waste, as the transitions say', async () => {
    const rows = await ledger.segments();
    const of = (id: string): unknown[] => rows.filter((r) => r.jobId === id).map((r) => [r.flavor, r.accelerators, r.endState, r.wasted]);
    expect(of(ids.a!)).toEqual([[H100, 8, 'PREEMPTED', true], [H100, 8, 'SUCCEEDED', false]]);
    expect(of(ids.b!)).toEqual([[H100, 8, 'PREEMPTED', true], [H100, 8, 'FAILED', true]]);
    expect(of(ids.c!)).toEqual([[H100, 16, 'CANCELLED', false]]);
    expect(of(ids.d!)).toEqual([[A100, 8, 'PENDING', true], [A100, 8, null, false]]);
    for (const id of Object.values(ids)) {
      const want = holdings(await history(id));
      expect(
        rows.filter((r) => r.jobId === id).map((r) => [r.team, r.flavor, r.accelerators, r.startedAt.getTime(), r.endedAt?.getTime() ?? null, r.endState, r.wasted, r.wastedSince?.getTime() ?? null]),
      ).toEqual(want.map((h) => [h.team, h.flavor, h.accelerators, h.start, h.end, h.endState, h.wasted, h.wasted ? h.wastedFrom : null]));
    }
  });

  it('is what a rebuild from the whole history of job_transitions gives', async () => {
    const strip = (rs: Awaited<ReturnType<UsageLedgerRepository['segments']>>): unknown[] =>
      rs.map(({ id: _id, ...r }) => r).sort((x, y) => x.startedAt.getTime() - y.startedAt.getTime() || (x.jobId < y.jobId ? -1 : 1));
    const before = strip(await ledger.segments());
    expect(await ledger.rebuild()).toBe(before.length);
    expect(strip(await ledger.segments())).toEqual(before);
  });

  it('keeps the price history of each flavor', async () => {
    expect((await ledger.prices(H100)).map((p) => p.costPerHour)).toEqual([4, 6]);
    expect((await ledger.prices(A100)).map((p) => p.costPerHour)).toEqual([2]);
  });

  const groupings: Dim[][] = [[], ['team'], ['team', 'flavor'], ['team', 'flavor', 'day'], ['flavor', 'month'], ['day']];
  it.each(groupings.map((g) => [g.join(',') || '(total)', g] as const))('equals the recomputation from job events, grouped by %s, over several windows', async (_label, groupBy) => {
    const all = await Promise.all(Object.values(ids).map(history));
    const hs = all.flatMap(holdings);
    const prices = [...(await ledger.prices(H100)), ...(await ledger.prices(A100))];
    const month = periodOf('month', now);
    const day = periodOf('day', now);
    const lastMonth = periodOf('month', new Date(month.start.getTime() - 1));
    const windows = [
      { from: lastMonth.start, to: month.end },
      { from: month.start, to: now },
      { from: lastMonth.start, to: month.start },
      { from: day.start, to: day.end },
      { from: new Date(month.start.getTime() - 20 * 60_000), to: new Date(day.start.getTime() + 1) },
    ];
    let nonEmpty = 0;
    for (const w of windows) {
      const got = await ledger.usage({ ...w, now, groupBy: groupBy });
      const want = recompute(hs, prices, { ...w, now, groupBy: [...groupBy] });
      const gotMap = new Map(got.map((r) => [[r.team ?? '', r.flavor ?? '', r.periodStart?.getTime() ?? ''].join('|'), r]));
      for (const [k, f] of want) {
        if (f.seconds === 0 && f.completed === 0) continue;
        const g = gotMap.get(k);
        expect({ k, w, found: g !== undefined }).toEqual({ k, w, found: true });
        expect(g!.acceleratorSeconds).toBeCloseTo(f.seconds, 3);
        expect(g!.wastedAcceleratorSeconds).toBeCloseTo(f.wasted, 3);
        expect(g!.cost).toBeCloseTo(f.cost, 6);
        expect(g!.jobsCompleted).toBe(f.completed);
        nonEmpty++;
      }
      expect(got.length).toBe([...want.values()].filter((f) => f.seconds > 0 || f.completed > 0).length);
    }
    expect(nonEmpty).toBeGreaterThan(0);
  });

  it('splits a holding at the month boundary: last month and this month each get their seconds', async () => {
    const month = periodOf('month', now);
    const lastMonth = periodOf('month', new Date(month.start.getTime() - 1));
    const rows = await ledger.usage({ from: lastMonth.start, to: month.end, now, groupBy: ['month'] });
    expect(rows.map((r) => r.periodStart?.toISOString())).toEqual([lastMonth.start.toISOString(), month.start.toISOString()]);
    // a and b held 8 each for the last 30 minutes of last month.
    expect(rows[0]!.acceleratorSeconds).toBeCloseTo(2 * 8 * 30 * 60, 3);
    expect(rows[0]!.cost).toBeCloseTo(2 * 8 * 0.5 * 4, 6);
  });
});

describe('budgets', () => {
  it('a block budget used up makes the cycle keep the team\'s new jobs pending with BUDGET_EXHAUSTED until the next period; other teams run', async () => {
    const budgets = new BudgetRepository(db);
    await budgets.put({ team: 'vision', period: 'month', limit: 1, unit: 'accelerator-hours', onExhausted: 'block' }, 'admin');
    const next = periodOf('month', new Date()).end.getTime();
    const snapshot = await loadSnapshot(db, Date.now(), DEFAULT_OPTIONS);
    expect(snapshot.budgetBlocks).toEqual([{ team: 'vision', until: next, message: expect.stringMatching(/^team vision used [\d,.]+ of 1 accelerator-hours of its month budget \(\d{4}-\d\d\); new jobs wait for the next period, from /) }]);
    const e = await submit('e', Date.now() - 1000, { flavors: [A100, H100] });
    const f = await submit('f', Date.now() - 1000, { team: 'nlp' });
    const r = await cycleAt(Date.now());
    expect(r.admitted).toEqual([f]);
    const pending = (await jobs.get(e))!;
    expect(pending).toMatchObject({ state: 'PENDING', pendingCode: 'BUDGET_EXHAUSTED' });
    expect(pending.pendingEstimatedStartAt?.getTime()).toBe(next);
    expect((await jobs.get(ids.d!))!.state).toBe('ADMITTED'); // running work continues
    // Lifting the budget lets it start at the next cycle.
    await budgets.put({ team: 'vision', period: 'month', limit: 1, unit: 'accelerator-hours', onExhausted: 'warn' }, 'admin');
    expect((await loadSnapshot(db, Date.now(), DEFAULT_OPTIONS)).budgetBlocks).toBeUndefined();
  });

  it('records each threshold once per period, with its event; currency budgets count cost', async () => {
    const budgets = new BudgetRepository(db);
    await budgets.put({ team: 'vision', period: 'week', limit: 1e9, unit: 'currency', onExhausted: 'warn' }, 'admin');
    const [week] = (await budgets.statuses(new Date(), ['vision'])).filter((b) => b.period === 'week');
    const usage = await ledger.usage({ from: week!.periodStart, to: week!.periodEnd, now: new Date(), groupBy: ['team'], teams: ['vision'] });
    expect(week!.used).toBeCloseTo(usage[0]!.cost, 3);
    expect(week!.state).toBe('ok');
    const [month] = (await budgets.statuses(new Date(), ['vision'])).filter((b) => b.period === 'month');
    expect(month!.state).toBe('exhausted');
    const first = await budgets.recordAlert(month!, 100);
    expect(first).not.toBeNull();
    expect(await budgets.recordAlert(month!, 100)).toBeNull();
    const events = await db.pool.query(`SELECT kind, team, message FROM events WHERE id = $1`, [first]);
    expect(events.rows[0]).toMatchObject({ kind: 'budget.exhausted', team: 'vision' });
    const audit = await db.pool.query<{ kind: string; actor: string }>(`SELECT kind, actor FROM events WHERE kind LIKE 'budget.%' ORDER BY id`);
    expect(audit.rows.map((x) => x.kind)).toEqual(['budget.created', 'budget.updated', 'budget.created', 'budget.exhausted']);
  });

  it("a stop budget used up: the cycle requeues the team's running jobs (BUDGET_EXHAUSTED, evict) and the ledger closes their use at the stop", async () => {
    const budgets = new BudgetRepository(db);
    await budgets.put({ team: 'nlp', period: 'day', limit: 0, unit: 'accelerator-hours', onExhausted: 'stop' }, 'admin');
    const dayEnd = periodOf('day', new Date()).end.getTime();
    const at = Date.now();
    const { snapshot, versions } = await loadSnapshotWithVersions(db, at, DEFAULT_OPTIONS);
    expect(snapshot.budgetStops).toEqual([
      { team: 'nlp', period: 'day', unit: 'accelerator-hours', until: dayEnd, message: expect.stringMatching(/^team nlp used [\d,.]+ of 0 accelerator-hours of its day budget \(\d{4}-\d\d-\d\d\)$/) },
    ]);
    expect(snapshot.budgetBlocks).toContainEqual({ team: 'nlp', until: dayEnd, message: expect.stringMatching(/; new and stopped jobs wait for the next period, from /) });
    const holding = snapshot.running.filter((j) => j.team === 'nlp').map((j) => j.id).sort();
    expect(holding.length).toBeGreaterThan(0);

    const result = runBudgetedCycle(snapshot);
    const out = await commitCycle(db, { result, now: at, versions, fencing: { leaseName: LEASE, token }, cycleNumber: await nextCycleNumber(db), leader: 'test' });
    expect([...out.stopped].sort()).toEqual(holding);
    expect(out.skipped).toEqual([]);
    for (const id of holding) {
      const job = (await jobs.get(id))!;
      expect(job).toMatchObject({ state: 'PENDING', pendingCode: 'BUDGET_EXHAUSTED' });
      expect(job.pendingEstimatedStartAt?.getTime()).toBe(dayEnd);
    }
    const segments = await db.pool.query<{ ended_at: Date | null; end_state: string }>(`SELECT ended_at, end_state::text FROM usage_segments WHERE job_id = ANY($1::uuid[]) ORDER BY id DESC LIMIT $2`, [holding, holding.length]);
    expect(segments.rows.map((r) => [r.ended_at?.getTime(), r.end_state])).toEqual(holding.map(() => [at, 'PREEMPTED']));
    const evicts = await db.pool.query(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'evict' AND payload->>'jobId' = ANY($1::text[])`, [holding]);
    expect(evicts.rows[0]).toEqual({ n: holding.length });
    const stopped = await db.pool.query<{ data: { jobs: { jobId: string }[] } }>(`SELECT data FROM events WHERE kind = 'budget.stopped' AND team = 'nlp'`);
    expect(stopped.rows.map((r) => r.data.jobs.map((j) => j.jobId).sort())).toEqual([holding]);
    await budgets.delete('nlp', 'day', 'admin');
  });
});
