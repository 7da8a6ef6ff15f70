import type { Pool } from 'pg';
import { moveJobs } from '#db';

/** Seeds one flavor, one team with a quota covering the fleet, and `nodes` nodes of `perNode` accelerators. */
export async function seedFleet(pool: Pool, opts: { nodes: number; perNode: number; team?: string; flavor?: string }): Promise<void> {
  const team = opts.team ?? 'vision';
  const flavor = opts.flavor ?? 'h100-80gb';
  await pool.query(`INSERT INTO flavors (name, kind, resource_name) VALUES ($1, 'nvidia-gpu', 'nvidia.com/gpu') ON CONFLICT DO NOTHING`, [flavor]);
  await pool.query(`INSERT INTO teams (name) VALUES ($1) ON CONFLICT DO NOTHING`, [team]);
  await pool.query(
    `INSERT INTO quotas (team, flavor, nominal, borrowing_limit, lending_limit) VALUES ($1, $2, $3, NULL, NULL) ON CONFLICT DO NOTHING`,
    [team, flavor, opts.nodes * opts.perNode],
  );
  await pool.query(
    `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone)
     SELECT 'node-' || lpad(g::text, 5, '0'), $1, $2, 96000, 1048576, 'z' || (g % 4) FROM generate_series(1, $3) g
     ON CONFLICT DO NOTHING`,
    [flavor, opts.perNode, opts.nodes],
  );
}

/** Submits `n` jobs of `replicas × perReplica` accelerators, as the API's submission does (job, transition, event). */
export async function submitJobs(pool: Pool, n: number, opts: { replicas?: number; perReplica?: number; team?: string; flavor?: string; tag: string }): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH j AS (
       INSERT INTO jobs (name, team, kind, replicas, min_replicas, accelerators_per_replica, flavors, template, created_by, expected_runtime_seconds)
       SELECT $1 || '-' || g, $2, 'training', $3, $3, $4, ARRAY[$5], '{"image":"busybox"}'::jsonb, 'test', 60
       FROM generate_series(1, $6) g
       RETURNING id, team, submitted_at
     ), t AS (
       INSERT INTO job_transitions (job_id, "from", "to", at, reason) SELECT id, NULL, 'PENDING', submitted_at, 'submitted' FROM j
     ), e AS (
       INSERT INTO events (at, kind, job_id, team, actor, message) SELECT submitted_at, 'job.submitted', id, team, 'test', 'submitted' FROM j
     )
     SELECT id::text AS id FROM j`,
    [opts.tag, opts.team ?? 'vision', opts.replicas ?? 1, opts.perReplica ?? 1, opts.flavor ?? 'h100-80gb', n],
  );
  return rows.map((r) => r.id);
}

/**
 * A standalone executor, as POST /v1/jobs/{id}/status would drive it (through the transition writer):
 * ADMITTED → RUNNING, then after `runMs` RUNNING → SUCCEEDED with the allocation released and a `delete`
 * outbox entry (same statement).
 */
export async function executorStep(pool: Pool, runMs: number): Promise<{ started: number; finished: number }> {
  const starting = await pool.query<{ id: string }>(`SELECT id::text AS id FROM jobs WHERE state IN ('ADMITTED', 'BINDING')`);
  const started = await moveJobs(pool, starting.rows.map((r) => ({ jobId: r.id, from: ['ADMITTED', 'BINDING'] as const, to: 'RUNNING' as const, reason: 'executor' })), {
    actor: 'executor',
  });
  const ending = await pool.query<{ id: string }>(
    `SELECT id::text AS id FROM jobs WHERE state = 'RUNNING' AND started_at < now() - make_interval(secs => $1::float8 / 1000)`,
    [runMs],
  );
  const finished = await moveJobs(pool, ending.rows.map((r) => ({ jobId: r.id, from: ['RUNNING'] as const, to: 'SUCCEEDED' as const, reason: 'executor' })), {
    actor: 'executor',
  });
  const count = (r: { results: { moved: boolean }[] }): number => r.results.filter((x) => x.moved).length;
  return { started: count(started), finished: count(finished) };
}

export interface Violations {
  overAllocatedNodes: { node: string; used: number; allocatable: number }[];
  admittedTwice: { jobId: string; admissions: number }[];
  allocationsOfNonHolding: number;
  holdingWithoutAllocation: number;
}

/** The rules a crash must never break, read from Postgres. */
export async function findViolations(pool: Pool): Promise<Violations> {
  const over = await pool.query<{ node: string; used: number; allocatable: number }>(
    `SELECT n.name AS node, sum(a.accelerators)::int AS used, n.accelerators AS allocatable
     FROM allocations a JOIN nodes n ON n.name = a.node GROUP BY n.name, n.accelerators HAVING sum(a.accelerators) > n.accelerators`,
  );
  // Without preemption or requeue in these tests, every job is admitted at most once.
  const twice = await pool.query<{ job_id: string; admissions: number }>(
    `SELECT job_id::text, count(*)::int AS admissions FROM job_transitions WHERE "to" = 'ADMITTED' GROUP BY job_id HAVING count(*) > 1`,
  );
  const nonHolding = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM allocations a JOIN jobs j ON j.id = a.job_id WHERE j.state NOT IN ('ADMITTED', 'BINDING', 'RUNNING')`,
  );
  const bare = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs j WHERE j.state IN ('ADMITTED', 'BINDING', 'RUNNING') AND NOT EXISTS (SELECT 1 FROM allocations a WHERE a.job_id = j.id)`,
  );
  return {
    overAllocatedNodes: over.rows,
    admittedTwice: twice.rows.map((r) => ({ jobId: r.job_id, admissions: r.admissions })),
    allocationsOfNonHolding: nonHolding.rows[0]!.n,
    holdingWithoutAllocation: bare.rows[0]!.n,
  };
}

export async function jobStates(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ state: string; n: number }>('SELECT state::text AS state, count(*)::int AS n FROM jobs GROUP BY 1');
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

export async function outboxStates(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status::text AS status, count(*)::int AS n FROM outbox GROUP BY 1');
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
