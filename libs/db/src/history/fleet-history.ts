import type { Queryable } from '../accounting/usage-ledger.js';

/**
 * The fleet over time (table fleet_history; issue #30): per flavor, and per team on each flavor, the
 * accelerators offered (schedulable nodes; a team's nominal quota), held, and asked by waiting jobs, with how
 * long those jobs have waited. The scheduler's leader records a minute sample (reconcile calls
 * recordFleetHistory every few seconds: one sample per minute, the rest are no-ops), rolls the minutes of the
 * current hour into its hour row and the hours of the current day into its day row, and drops rows older than
 * each grain's retention. A waiting job counts on its first acceptable flavor. Team '' is the whole flavor.
 */
export type HistoryResolution = 'minute' | 'hour' | 'day';
export const HISTORY_RESOLUTIONS: readonly HistoryResolution[] = ['minute', 'hour', 'day'];

export interface HistoryRetention {
  /** How long minute rows are kept, and hour rows, and day rows (ms). */
  minuteMs: number;
  hourMs: number;
  dayMs: number;
}

export const DEFAULT_HISTORY_RETENTION: HistoryRetention = {
  minuteMs: 86_400_000,
  hourMs: 31 * 86_400_000,
  dayMs: 2 * 365 * 86_400_000,
};

export interface FleetHistoryRow {
  at: Date;
  flavor: string;
  /** null: the whole flavor. */
  team: string | null;
  capacity: number;
  allocated: number;
  pendingJobs: number;
  pendingAccelerators: number;
  waitP50Seconds: number | null;
  waitP90Seconds: number | null;
  waitMaxSeconds: number | null;
  samples: number;
}

export interface FleetHistoryQuery {
  resolution: HistoryResolution;
  /** Inclusive, exclusive. */
  from: Date;
  to: Date;
  flavor?: string;
  /** Only these teams' rows (a member's); flavor rows are always included. undefined: every team. */
  teams?: readonly string[];
  /** Only this team's rows (and the flavor rows). */
  team?: string;
  /** At most this many rows (by time, then flavor, then team). */
  limit: number;
}

/**
 * Records the minute sample of `now` (once: a second call in the same minute writes nothing) and, when it did,
 * rolls up the current hour and day and applies the retention. Returns the rows of the sample written.
 */
export async function recordFleetHistory(sql: Queryable, now: Date, retention: HistoryRetention = DEFAULT_HISTORY_RETENTION): Promise<number> {
  // Most calls (reconcile runs every few seconds) find the minute sampled: an index probe, not the sample's reads.
  const seen = await sql.query(`SELECT 1 FROM fleet_history WHERE resolution = 'minute' AND at = date_trunc('minute', $1::timestamptz) LIMIT 1`, [now]);
  if (seen.rows.length > 0) return 0;
  const { rows } = await sql.query<{ n: string }>(SAMPLE_SQL, [now]);
  const written = Number(rows[0]?.n ?? 0);
  if (written === 0) return 0;
  await sql.query(ROLLUP_SQL, ['hour', 'minute', now]);
  await sql.query(ROLLUP_SQL, ['day', 'hour', now]);
  await sql.query(
    `DELETE FROM fleet_history
      WHERE (resolution = 'minute' AND at < $1::timestamptz - make_interval(secs => $2::float8 / 1000.0))
         OR (resolution = 'hour' AND at < $1::timestamptz - make_interval(secs => $3::float8 / 1000.0))
         OR (resolution = 'day' AND at < $1::timestamptz - make_interval(secs => $4::float8 / 1000.0))`,
    [now, retention.minuteMs, retention.hourMs, retention.dayMs],
  );
  return written;
}

/** Rows of a window at one grain, oldest first (then flavor, then team: the flavor's own row first). */
export async function readFleetHistory(sql: Queryable, q: FleetHistoryQuery): Promise<FleetHistoryRow[]> {
  const { rows } = await sql.query<{
    at: Date;
    flavor: string;
    team: string;
    capacity: number;
    allocated: number;
    pending_jobs: number;
    pending_accelerators: number;
    wait_p50_seconds: number | null;
    wait_p90_seconds: number | null;
    wait_max_seconds: number | null;
    samples: number;
  }>(
    `SELECT at, flavor, team, capacity, allocated, pending_jobs, pending_accelerators, wait_p50_seconds, wait_p90_seconds, wait_max_seconds, samples
       FROM fleet_history
      WHERE resolution = $1::text::history_resolution AND at >= $2 AND at < $3
        AND ($4::text IS NULL OR flavor = $4)
        AND (team = '' OR (($5::text[] IS NULL OR team = ANY($5::text[])) AND ($6::text IS NULL OR team = $6)))
      ORDER BY at, flavor, team
      LIMIT $7`,
    [q.resolution, q.from, q.to, q.flavor ?? null, q.teams === undefined ? null : [...q.teams], q.team ?? null, q.limit],
  );
  return rows.map((r) => ({
    at: r.at,
    flavor: r.flavor,
    team: r.team === '' ? null : r.team,
    capacity: r.capacity,
    allocated: r.allocated,
    pendingJobs: r.pending_jobs,
    pendingAccelerators: r.pending_accelerators,
    waitP50Seconds: r.wait_p50_seconds,
    waitP90Seconds: r.wait_p90_seconds,
    waitMaxSeconds: r.wait_max_seconds,
    samples: r.samples,
  }));
}

/**
 * One minute sample, per flavor ('' team) and per team with quota, holdings or waiting jobs on it. ON CONFLICT
 * DO NOTHING: the minute's first call writes it, later ones (reconcile runs every few seconds) nothing.
 */
const SAMPLE_SQL = `
WITH t AS (SELECT date_trunc('minute', $1::timestamptz) AS at, $1::timestamptz AS now),
held AS (
  SELECT a.flavor, j.team, sum(a.accelerators)::float8 AS n
    FROM allocations a JOIN jobs j ON j.id = a.job_id
   WHERE j.state IN ('ADMITTED', 'BINDING', 'RUNNING')
   GROUP BY ROLLUP (a.flavor, j.team)),
pending AS (
  -- How long each waiting job has waited (never below 0: a clock a little behind the database's).
  SELECT j.flavors[1] AS flavor, j.team, j.replicas * j.accelerators_per_replica AS accelerators,
         GREATEST(extract(epoch FROM t.now - COALESCE(j.queued_at, j.submitted_at)), 0)::float8 AS waited
    FROM jobs j CROSS JOIN t
   WHERE j.state = 'PENDING'),
waiting AS (
  SELECT flavor, team, count(*)::float8 AS jobs, sum(accelerators)::float8 AS accelerators,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY waited) AS p50,
         percentile_cont(0.9) WITHIN GROUP (ORDER BY waited) AS p90,
         max(waited) AS longest
    FROM pending
   GROUP BY ROLLUP (flavor, team)),
offered AS (
  SELECT flavor, '' AS team, sum(accelerators)::float8 AS n FROM nodes WHERE schedulable GROUP BY flavor
  UNION ALL
  SELECT flavor, team, nominal::float8 FROM quotas),
keys AS (
  SELECT flavor, COALESCE(team, '') AS team FROM held WHERE flavor IS NOT NULL
  UNION SELECT flavor, COALESCE(team, '') FROM waiting WHERE flavor IS NOT NULL
  UNION SELECT flavor, team FROM offered
  UNION SELECT name, '' FROM flavors),
ins AS (
  INSERT INTO fleet_history (resolution, at, flavor, team, capacity, allocated, pending_jobs, pending_accelerators,
                             wait_p50_seconds, wait_p90_seconds, wait_max_seconds, samples)
  SELECT 'minute', t.at, k.flavor, k.team, COALESCE(o.n, 0), COALESCE(h.n, 0), COALESCE(w.jobs, 0), COALESCE(w.accelerators, 0),
         w.p50, w.p90, w.longest, 1
    FROM keys k CROSS JOIN t
    LEFT JOIN offered o ON o.flavor = k.flavor AND o.team = k.team
    LEFT JOIN held h ON h.flavor = k.flavor AND COALESCE(h.team, '') = k.team
    LEFT JOIN waiting w ON w.flavor = k.flavor AND COALESCE(w.team, '') = k.team
  ON CONFLICT DO NOTHING
  RETURNING 1)
SELECT count(*)::text AS n FROM ins`;

/**
 * The row of grain $1 that holds $3, from the rows of grain $2 inside it: quantities averaged over the
 * minute samples (weighted by each row's samples), waits the largest.
 */
const ROLLUP_SQL = `
INSERT INTO fleet_history (resolution, at, flavor, team, capacity, allocated, pending_jobs, pending_accelerators,
                           wait_p50_seconds, wait_p90_seconds, wait_max_seconds, samples)
SELECT $1::text::history_resolution, date_trunc($1::text, $3::timestamptz), flavor, team,
       sum(capacity * samples) / sum(samples), sum(allocated * samples) / sum(samples),
       sum(pending_jobs * samples) / sum(samples), sum(pending_accelerators * samples) / sum(samples),
       max(wait_p50_seconds), max(wait_p90_seconds), max(wait_max_seconds), sum(samples)::int
  FROM fleet_history
 WHERE resolution = $2::text::history_resolution
   AND at >= date_trunc($1::text, $3::timestamptz) AND at < date_trunc($1::text, $3::timestamptz) + ('1 ' || $1::text)::interval
 GROUP BY flavor, team
ON CONFLICT (resolution, flavor, team, at) DO UPDATE SET
  capacity = EXCLUDED.capacity, allocated = EXCLUDED.allocated, pending_jobs = EXCLUDED.pending_jobs,
  pending_accelerators = EXCLUDED.pending_accelerators, wait_p50_seconds = EXCLUDED.wait_p50_seconds,
  wait_p90_seconds = EXCLUDED.wait_p90_seconds, wait_max_seconds = EXCLUDED.wait_max_seconds, samples = EXCLUDED.samples`;
