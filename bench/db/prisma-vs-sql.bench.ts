// `npm run bench:prisma`: the same database work through the Prisma client and through raw SQL, on one
// machine in one run, printed as JSON (ms, median of RUNS, and the ratio prisma / sql). It is the figure
// ADR 0017 gives for keeping raw SQL on the scheduler's hot paths.
//
// World: RUNNING jobs holding 2 allocations each on NODES nodes, and PENDING jobs.
// - read: every active job with the columns the snapshot needs and its allocations
//   (Prisma: findMany + select of the relation; SQL: one SELECT with a json_agg subquery per job);
// - pendingUpdate: a cycle's per-job pending fields (code, message, position) for UPDATES jobs, each its own
//   values (Prisma: one update per job in a batch transaction; SQL: one UPDATE … FROM unnest(…));
// - outboxInsert: UPDATES outbox entries with a dedupe key, skipping duplicates (Prisma: createMany
//   skipDuplicates; SQL: one INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING).
// Env: RUNNING (2000), PENDING (10000), UPDATES (2000), RUNS (3).
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { Database } from '../../libs/db/src/database.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';
import { moveJobs } from '../../libs/db/src/lifecycle/transition-writer.js';

const RUNNING = Number(process.env['RUNNING'] ?? 2000);
const PENDING = Number(process.env['PENDING'] ?? 10000);
const UPDATES = Number(process.env['UPDATES'] ?? 2000);
const RUNS = Number(process.env['RUNS'] ?? 3);
const NODES = Math.ceil((RUNNING * 2) / 2);

async function seed(db: Database): Promise<void> {
  const q = (sql: string, values: unknown[] = []): Promise<unknown> => db.pool.query(sql, values);
  await q(`INSERT INTO flavors (name, kind, resource_name) VALUES ('h100-80gb', 'nvidia-gpu', 'nvidia.com/gpu')`);
  await q(`INSERT INTO teams (name) SELECT 'team-' || t FROM generate_series(0, 19) t`);
  await q(`INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib) SELECT 'node-' || n, 'h100-80gb', 8, 96000, 1048576 FROM generate_series(0, $1::int - 1) n`, [NODES]);
  // Every job is inserted PENDING; the RUNNING ones get there through the transition writer (which also
  // writes their allocations), like every other state change: job i's two replicas fill node-i.
  await q(
    `INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, flavors, template, created_by)
     SELECT 'job-' || n, 'team-' || (n % 20), 'training', 2, 2, 4, ARRAY['h100-80gb'], '{}', 'bench'
     FROM generate_series(0, $1::int - 1) n`,
    [RUNNING + PENDING],
  );
  const { rows } = await db.pool.query<{ id: string }>(`SELECT id::text AS id FROM jobs ORDER BY id LIMIT $1`, [RUNNING]);
  const placement = (node: string) => [0, 1].map((replica) => ({ replica, node, accelerators: 4, cpuMillis: 1000, memoryMiB: 1024 }));
  await moveJobs(
    db.pool,
    rows.map((r, i) => ({
      jobId: r.id,
      to: 'ADMITTED' as const,
      reason: 'bench seed',
      admission: { flavor: 'h100-80gb', replicas: 2, preempts: [], placement: placement(`node-${i}`) },
    })),
    { actor: 'bench' },
  );
  await moveJobs(db.pool, rows.map((r) => ({ jobId: r.id, to: 'RUNNING' as const, reason: 'bench seed' })), { actor: 'bench' });
  await q('ANALYZE');
}

const SNAPSHOT_COLUMNS = {
  id: true, name: true, team: true, kind: true, priority: true, preemptible: true, replicas: true, minReplicas: true,
  acceleratorsPerReplica: true, cpuMillisPerReplica: true, memoryMiBPerReplica: true, flavors: true, flavorSelection: true,
  speeds: true, topologyLevel: true, tpuShape: true, expectedRuntimeSeconds: true, state: true, flavor: true,
  admittedReplicas: true, preemptedJobs: true, submittedAt: true, queuedAt: true, admittedAt: true, version: true,
} as const;

async function readPrisma(db: Database): Promise<number> {
  const rows = await db.prisma.job.findMany({
    where: { state: { in: ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING'] } },
    select: { ...SNAPSHOT_COLUMNS, allocations: { select: { replica: true, node: true, accelerators: true, cpuMillis: true, memoryMiB: true } } },
  });
  return rows.length;
}

async function readSql(db: Database): Promise<number> {
  const { rows } = await db.pool.query(
    `SELECT j.id, j.name, j.team, j.kind, j.priority, j.preemptible, j.replicas, j.min_replicas, j.accelerators_per_replica,
            j.cpu_millis_per_replica, j.memory_mib_per_replica, j.flavors, j.flavor_selection, j.speeds, j.topology_level,
            j.tpu_shape, j.expected_runtime_seconds, j.state, j.flavor, j.admitted_replicas, j.preempted_jobs, j.submitted_at,
            j.queued_at, j.admitted_at, j.version,
            (SELECT json_agg(json_build_object('replica', a.replica, 'node', a.node, 'accelerators', a.accelerators,
                    'cpuMillis', a.cpu_millis, 'memoryMiB', a.memory_mib)) FROM allocations a WHERE a.job_id = j.id) AS allocations
     FROM jobs j WHERE j.state IN ('PENDING', 'ADMITTED', 'BINDING', 'RUNNING')`,
  );
  return rows.length;
}

async function pendingIds(db: Database): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE state = 'PENDING' ORDER BY id LIMIT $1`, [UPDATES]);
  return rows.map((r) => r.id);
}

async function updatePrisma(db: Database, ids: string[], run: number): Promise<void> {
  await db.prisma.$transaction(
    ids.map((id, i) => db.prisma.job.update({ where: { id }, data: { pendingCode: 'QUOTA_EXCEEDED', pendingMessage: `run ${run}: waits`, pendingPosition: i + 1 } })),
    { maxWait: 120_000, timeout: 120_000 }, // Prisma's default 5 s is not enough for 2,000 updates on this machine
  );
}

async function updateSql(db: Database, ids: string[], run: number): Promise<void> {
  await db.pool.query(
    `UPDATE jobs j SET pending_code = 'QUOTA_EXCEEDED', pending_message = u.message, pending_position = u.position
     FROM unnest($1::uuid[], $2::text[], $3::int[]) AS u(id, message, position) WHERE j.id = u.id`,
    [ids, ids.map(() => `run ${run}: waits`), ids.map((_, i) => i + 1)],
  );
}

async function outboxPrisma(db: Database, ids: string[], run: number): Promise<void> {
  await db.prisma.outboxEntry.createMany({ data: ids.map((id) => ({ kind: 'notify', payload: { jobId: id }, dedupeKey: `notify:${id}:p${run}` })), skipDuplicates: true });
}

async function outboxSql(db: Database, ids: string[], run: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO outbox (kind, payload, dedupe_key)
     SELECT 'notify', jsonb_build_object('jobId', id), 'notify:' || id || ':s' || $2::text FROM unnest($1::uuid[]) AS id
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [ids, run],
  );
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (n: number): number => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  const testDb = await createTestDatabase({ label: 'bench_prisma' });
  const db = new Database(testDb.url, { poolSize: 4 });
  try {
    await seed(db);
    const ids = await pendingIds(db);
    const figures: Record<string, { prisma: number[]; sql: number[] }> = {
      read: { prisma: [], sql: [] },
      pendingUpdate: { prisma: [], sql: [] },
      outboxInsert: { prisma: [], sql: [] },
    };
    await readPrisma(db); // warm-up: connections, Prisma's query compiler
    await readSql(db);
    for (let run = 0; run < RUNS; run++) {
      // Alternate which goes first, so neither always meets a warmer cache.
      const pairs: [keyof typeof figures, () => Promise<unknown>, () => Promise<unknown>][] = [
        ['read', () => readPrisma(db), () => readSql(db)],
        ['pendingUpdate', () => updatePrisma(db, ids, run), () => updateSql(db, ids, run)],
        ['outboxInsert', () => outboxPrisma(db, ids, run), () => outboxSql(db, ids, run)],
      ];
      for (const [name, prisma, sql] of pairs) {
        if (run % 2 === 0) {
          figures[name]!.prisma.push(await time(prisma));
          figures[name]!.sql.push(await time(sql));
        } else {
          figures[name]!.sql.push(await time(sql));
          figures[name]!.prisma.push(await time(prisma));
        }
      }
    }
    const out: Record<string, unknown> = { bench: 'prisma-vs-sql', running: RUNNING, pending: PENDING, updates: UPDATES, runs: RUNS, loadavg: loadavg().map(round) };
    for (const [name, f] of Object.entries(figures)) {
      const p = median(f.prisma);
      const s = median(f.sql);
      out[name] = { prismaMs: round(p), sqlMs: round(s), ratio: Math.round((p / s) * 100) / 100 };
    }
    console.log(JSON.stringify(out));
  } finally {
    await db.close();
    await testDb.drop();
  }
}

await main();
