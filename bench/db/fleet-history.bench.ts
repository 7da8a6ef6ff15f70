// `npm run bench:history`: what the fleet history costs the scheduler's leader once a minute — the minute's
// sample, the hour and day rollups and the retention — on a fleet of TEAMS teams × FLAVORS flavors with
// PENDING waiting and RUNNING running jobs, after MINUTES minutes already recorded (the hour's rollup reads
// them). Prints JSON with the load beside it. Env: TEAMS, FLAVORS, PENDING, RUNNING, MINUTES, RUNS.
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import pg from 'pg';
import { recordFleetHistory } from '../../libs/db/src/history/fleet-history.js';
import { moveJobs } from '../../libs/db/src/lifecycle/transition-writer.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const TEAMS = Number(process.env['TEAMS'] ?? 200);
const FLAVORS = Number(process.env['FLAVORS'] ?? 4);
const PENDING = Number(process.env['PENDING'] ?? 20_000);
const RUNNING = Number(process.env['RUNNING'] ?? 5_000);
const MINUTES = Number(process.env['MINUTES'] ?? 59);
const RUNS = Number(process.env['RUNS'] ?? 5);

async function seed(db: pg.Pool): Promise<void> {
  await db.query(`INSERT INTO flavors (name, kind, resource_name) SELECT 'f' || g, 'nvidia-gpu', 'nvidia.com/gpu' FROM generate_series(1, $1) g`, [FLAVORS]);
  await db.query(`INSERT INTO teams (name) SELECT 't' || g FROM generate_series(1, $1) g`, [TEAMS]);
  await db.query(`INSERT INTO quotas (team, flavor, nominal) SELECT 't' || t, 'f' || f, 64 FROM generate_series(1, $1) t, generate_series(1, $2) f`, [TEAMS, FLAVORS]);
  await db.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib) SELECT 'n' || g, 'f' || (1 + g % $2), 8, 96000, 1048576 FROM generate_series(1, $1) g`,
    [RUNNING, FLAVORS],
  );
  await db.query(
    `INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, flavors, template, created_by, submitted_at, queued_at)
     SELECT 'p' || g, 't' || (1 + g % $2), 'training', 1, 1, 8, ARRAY['f' || (1 + g % $3)], '{}'::jsonb, 'bench',
            now() - make_interval(secs => g % 3600), now() - make_interval(secs => g % 3600)
       FROM generate_series(1, $1) g`,
    [PENDING, TEAMS, FLAVORS],
  );
  // Running jobs, one per node, admitted through the transition writer (the only writer of jobs.state).
  const { rows } = await db.query<{ id: string; g: number }>(
    `INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, flavors, template, created_by)
     SELECT 'r' || g, 't' || (1 + g % $2), 'training', 1, 1, 8, ARRAY['f' || (1 + g % $3)], '{}'::jsonb, 'bench'
       FROM generate_series(1, $1) g
     RETURNING id::text AS id, substr(name, 2)::int AS g`,
    [RUNNING, TEAMS, FLAVORS],
  );
  await moveJobs(
    db,
    rows.map((r) => {
      const flavor = `f${1 + (r.g % FLAVORS)}`;
      return { jobId: r.id, to: 'ADMITTED' as const, reason: 'bench', admission: { flavor, replicas: 1, preempts: [], placement: [{ replica: 0, node: `n${r.g}`, accelerators: 8, cpuMillis: 1000, memoryMiB: 1024 }] } };
    }),
    { actor: 'bench' },
  );
  await db.query('ANALYZE');
}

async function main(): Promise<void> {
  const testDb = await createTestDatabase({ label: 'bench_fleet_history' });
  const db = new pg.Pool({ connectionString: testDb.url, max: 2 });
  try {
    await seed(db);
    const start = Date.UTC(2026, 11, 7, 10, 0);
    for (let m = 0; m < MINUTES; m++) await recordFleetHistory(db, new Date(start + m * 60_000));
    const ms: number[] = [];
    let rows = 0;
    for (let r = 0; r < RUNS; r++) {
      // Each run is a new minute of the same hour while there is one (the hour's rollup reads its minutes).
      const t0 = performance.now();
      rows = await recordFleetHistory(db, new Date(start + (MINUTES + r) * 60_000));
      ms.push(performance.now() - t0);
    }
    const idle: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      await recordFleetHistory(db, new Date(start + (MINUTES + RUNS - 1) * 60_000 + 30_000)); // same minute again: the no-op reconcile pays
      idle.push(performance.now() - t0);
    }
    const { rows: size } = await db.query<{ n: string; bytes: string }>(`SELECT count(*)::text AS n, pg_total_relation_size('fleet_history')::text AS bytes FROM fleet_history`);
    ms.sort((a, b) => a - b);
    idle.sort((a, b) => a - b);
    process.stdout.write(
      JSON.stringify({
        bench: 'fleet-history',
        teams: TEAMS,
        flavors: FLAVORS,
        pending: PENDING,
        running: RUNNING,
        minutesBefore: MINUTES,
        rowsPerSample: rows,
        sampleMs: { min: Math.round(ms[0]!), median: Math.round(ms[Math.floor(ms.length / 2)]!), max: Math.round(ms.at(-1)!) },
        sameMinuteMs: { median: Math.round(idle[Math.floor(idle.length / 2)]! * 10) / 10 },
        tableRows: Number(size[0]!.n),
        tableBytes: Number(size[0]!.bytes),
        bytesPerRow: Math.round(Number(size[0]!.bytes) / Number(size[0]!.n)),
        loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
      }) + '\n',
    );
  } finally {
    await db.end();
    await testDb.drop();
  }
}

await main();
