// `npm run bench:db:drain`: the phases of the drain's one big cycle (bench:e2e drain's world: 10,000
// pending single-accelerator jobs, 5,000 nodes, two teams) without the service around them — read, the
// core's cycle, the guard, the commit — and, with EXPLAIN=1, where the commit's time goes inside Postgres
// (each statement of the commit run under EXPLAIN ANALYZE in one transaction, rolled back; trigger times
// included; EXPLAIN_TEXT=1 prints the plans as text, EXPLAIN_NESTED=1 adds the plans of the statements
// the triggers run, through auto_explain). With EXPLAIN the measured commit follows a rolled-back one.
// Prints JSON. Env: JOBS, NODES, RUNS, EXPLAIN, EXPLAIN_TEXT, EXPLAIN_NESTED, ABLATE.
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { checkSafetyInvariants, DEFAULT_OPTIONS, runCycle } from '#core';
import pg from 'pg';
import { cycleCommit } from '../../libs/db/src/scheduling/commit-cycle.js';
import { CycleSession } from '../../libs/db/src/scheduling/cycle-session.js';
import { acquireOrRenewLease } from '../../libs/db/src/scheduling/lease.js';
import { inline } from '../../libs/db/src/scheduling/sql-message.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const JOBS = Number(process.env['JOBS'] ?? 10_000);
const NODES = Number(process.env['NODES'] ?? 5_000);
const RUNS = Number(process.env['RUNS'] ?? 1);
const EXPLAIN = process.env['EXPLAIN'] === '1';
/** Ablation: drop these before the commit, to see what each costs (fk — or fk_job, fk_node —, usage, snapshot, events_idx, jobs_idx). */
const ABLATE = (process.env['ABLATE'] ?? '').split(',').filter((x) => x !== '');
const FLAVOR = 'h100-80gb';
const TEAMS = ['bench-a', 'bench-b'];

async function seed(db: pg.Pool): Promise<void> {
  await db.query(`INSERT INTO flavors (name, kind, resource_name, memory_gib, cost_per_hour) VALUES ($1, 'nvidia-gpu', 'nvidia.com/gpu', 80, 4)`, [FLAVOR]);
  await db.query(`INSERT INTO cohorts (name) VALUES ('bench')`);
  for (const team of TEAMS) {
    await db.query(`INSERT INTO teams (name, cohort) VALUES ($1, 'bench')`, [team]);
    await db.query(`INSERT INTO quotas (team, flavor, nominal) VALUES ($1, $2, $3)`, [team, FLAVOR, (NODES * 8) / TEAMS.length]);
  }
  await db.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone, block)
     SELECT 'node-' || lpad(g::text, 5, '0'), $1, 8, 96000, 1048576, 'z' || (g % 4), 'b' || (g % 32) FROM generate_series(1, $2) g`,
    [FLAVOR, NODES],
  );
  await db.query(
    `WITH j AS (
       INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, cpu_millis_per_replica, memory_mib_per_replica,
                         flavors, template, created_by, expected_runtime_seconds, submitted_at, queued_at)
       SELECT 'drain-' || g, ($3::text[])[1 + g % array_length($3::text[], 1)], 'training', 1, 1, 1, 1000, 1024, ARRAY[$1],
              '{"image":"busybox"}'::jsonb, 'bench', 60, now() - make_interval(secs => 1), now() - make_interval(secs => 1)
       FROM generate_series(1, $2) g
       RETURNING id, team, submitted_at
     ), t AS (
       INSERT INTO job_transitions (job_id, "from", "to", at, reason) SELECT id, NULL, 'PENDING', submitted_at, 'submitted' FROM j
     )
     INSERT INTO events (at, kind, job_id, team, actor, message) SELECT submitted_at, 'job.submitted', id, team, 'bench', 'submitted' FROM j`,
    [FLAVOR, JOBS, TEAMS],
  );
  await db.query('ANALYZE');
}

interface Plan {
  'Plan': PlanNode;
  'Triggers'?: { 'Trigger Name': string; 'Relation': string; 'Time': number; 'Calls': number }[];
  'Execution Time': number;
  'Planning Time': number;
  'JIT'?: { Timing: Record<string, unknown> };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Subplan Name'?: string;
  'CTE Name'?: string;
  'Actual Total Time': number;
  'Actual Loops': number;
  'Actual Rows': number;
  'Plans'?: PlanNode[];
}

/** Every plan node with its own time (total minus its children's), for a rough where-does-it-go. */
function flatten(node: PlanNode): { node: string; rows: number; selfMs: number }[] {
  const children = node.Plans ?? [];
  const total = node['Actual Total Time'] * node['Actual Loops'];
  const childTotal = children.reduce((n, c) => n + c['Actual Total Time'] * c['Actual Loops'], 0);
  const name = [node['Node Type'], node['Relation Name'], node['Subplan Name'], node['CTE Name']].filter(Boolean).join(' ');
  return [{ node: name, rows: node['Actual Rows'] * node['Actual Loops'], selfMs: Math.round(total - childTotal) }, ...children.flatMap(flatten)];
}

async function explain(pool: pg.Pool, input: Parameters<typeof cycleCommit>[0]): Promise<unknown[]> {
  const { statements } = cycleCommit(input);
  const client = await pool.connect();
  const out: unknown[] = [];
  if (process.env['EXPLAIN_NESTED']) {
    // The plans of the statements the triggers run, as notices (auto_explain).
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 20; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_level = 'notice'`);
    client.on('notice', (n) => console.error(String(n.message).slice(0, 6000)));
  }
  try {
    for (const s of statements) {
      const text = typeof s === 'string' ? s : s.values && s.values.length > 0 ? inline(s.text, s.values) : s.text;
      if (/^(BEGIN|COMMIT|SET|DO)\b/.test(text)) {
        await client.query(text === 'COMMIT' ? 'ROLLBACK' : text);
        continue;
      }
      if (process.env['EXPLAIN_TEXT']) {
        const { rows: lines } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`);
        console.error(lines.map((l) => l['QUERY PLAN']).join('\n'));
        continue;
      }
      const { rows } = await client.query<{ 'QUERY PLAN': Plan[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`);
      const plan = rows[0]!['QUERY PLAN'][0]!;
      out.push({
        statement: text.slice(0, 80).replace(/\s+/g, ' '),
        ms: Math.round(plan['Execution Time']),
        planningMs: Math.round(plan['Planning Time']),
        planMs: Math.round(plan.Plan['Actual Total Time']),
        jit: plan.JIT?.Timing,
        nodes: flatten(plan.Plan).filter((n) => n.selfMs >= 20),
        triggers: (plan.Triggers ?? []).map((t) => ({ name: t['Trigger Name'], on: t.Relation, ms: Math.round(t.Time), calls: t.Calls })),
      });
    }
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
  return out;
}

async function ablate(pool: pg.Pool): Promise<void> {
  for (const what of ABLATE) {
    if (what === 'fk') {
      await pool.query('ALTER TABLE allocations DROP CONSTRAINT allocations_job_id_fkey, DROP CONSTRAINT allocations_node_fkey');
      await pool.query('ALTER TABLE job_transitions DROP CONSTRAINT job_transitions_job_id_fkey');
    } else if (what === 'fk_job') {
      await pool.query('ALTER TABLE allocations DROP CONSTRAINT allocations_job_id_fkey');
      await pool.query('ALTER TABLE job_transitions DROP CONSTRAINT job_transitions_job_id_fkey');
    } else if (what === 'fk_node') {
      await pool.query('ALTER TABLE allocations DROP CONSTRAINT allocations_node_fkey');
    } else if (what === 'usage') await pool.query('DROP TRIGGER job_transitions_usage ON job_transitions');
    else if (what === 'snapshot') await pool.query('DROP TRIGGER jobs_snapshot_update ON jobs');
    else if (what === 'events_idx') await pool.query('DROP INDEX events_team_id_idx, events_kind_id_idx');
    else if (what === 'jobs_idx') await pool.query('DROP INDEX jobs_submitted_at_id_idx, jobs_team_submitted_at_id_idx');
    else throw new Error(`ABLATE: unknown ${what}`);
  }
}

async function run(): Promise<Record<string, unknown>> {
  const testDb = await createTestDatabase({ label: 'drain' });
  const pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  pool.on('error', () => undefined);
  try {
    await seed(pool);
    const db = { pool };
    const lease = await acquireOrRenewLease(db, 'scheduler', 'bench', 600_000);
    const session = await CycleSession.open(db);
    try {
      const now = Date.now();
      let t = performance.now();
      const { read } = await session.read('full', null, now, DEFAULT_OPTIONS);
      const readMs = performance.now() - t;
      t = performance.now();
      const result = runCycle(read.snapshot);
      const scheduleMs = performance.now() - t;
      t = performance.now();
      const violations = checkSafetyInvariants(read.snapshot, result);
      const checkMs = performance.now() - t;
      if (violations.length > 0) throw new Error(`guard: ${violations.length} violations`);
      const input = { result, now, fencing: { leaseName: 'scheduler', token: lease.fencingToken }, cycleNumber: read.cycleNumber, leader: 'bench', versions: read.versions };
      const plans = EXPLAIN ? await explain(pool, input) : undefined;
      t = performance.now();
      const { statements } = cycleCommit(input);
      const buildMs = performance.now() - t;
      const messageChars = statements.reduce<number>((n, s) => n + (typeof s === 'string' ? s.length : inline(s.text, s.values ?? []).length), 0);
      await ablate(pool);
      t = performance.now();
      const outcome = await session.commit(input);
      const commitMs = performance.now() - t;
      return {
        admitted: outcome.admitted.length,
        readMs: Math.round(readMs),
        scheduleMs: Math.round(scheduleMs),
        checkMs: Math.round(checkMs),
        buildMs: Math.round(buildMs),
        commitMs: Math.round(commitMs),
        messageMB: Math.round(messageChars / 1e5) / 10,
        decisionsPerSec: Math.round(outcome.admitted.length / ((readMs + scheduleMs + checkMs + commitMs) / 1000)),
        loadAverage: Math.round(loadavg()[0]! * 10) / 10,
        ...(plans ? { plans } : {}),
      };
    } finally {
      await session.close();
    }
  } finally {
    await pool.end();
    await testDb.drop();
  }
}

for (let i = 0; i < RUNS; i++) console.log(JSON.stringify({ bench: 'db.drain-commit', jobs: JOBS, nodes: NODES, ...(await run()) }, null, EXPLAIN ? 2 : 0));
