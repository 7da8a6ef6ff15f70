import type { QueryResultRow } from 'pg';

/** A pool or a client inside a transaction (the snapshot reads budgets in its own). */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export type UsageDimension = 'team' | 'user' | 'flavor' | 'day' | 'month';
export const USAGE_DIMENSIONS: readonly UsageDimension[] = ['team', 'user', 'flavor', 'day', 'month'];

/** The `user` of usage whose job is gone (its team was deleted): the ledger keeps the hours, not who submitted them. */
export const UNKNOWN_USER = '(job deleted)';

/**
 * Who submitted a segment's job (its createdBy), and through which token: read only when grouped by user, from
 * one join of the segment's job (`USER_JOIN`, aliased `uj`; gone with its team: UNKNOWN_USER).
 */
const USER_SQL = `COALESCE(uj.created_by, '${UNKNOWN_USER}') AS usr`;
const USER_TOKEN_SQL = `uj.created_by_token::text AS utok`;
const USER_JOIN = 'LEFT JOIN jobs uj ON uj.id = s.job_id';

export interface UsageWindow {
  /** Inclusive. */
  from: Date;
  /** Exclusive. Past `now`, holdings still open count up to `now`. */
  to: Date;
  now: Date;
  /** At most one of day/month. Empty: one total. */
  groupBy: readonly UsageDimension[];
  /** Only these teams (undefined: every team). */
  teams?: readonly string[];
}

export interface UsageRow {
  team?: string;
  /** Who submitted the jobs (their createdBy: a token's subject; `kubernetes` for imported ones), with `groupBy` user. */
  user?: string;
  /**
   * The API token that submitted them, with `groupBy` user: a user is a token, so two tokens that share a subject
   * are two rows. Null for the bootstrap admin token, imported jobs and jobs gone with their team.
   */
  userToken?: string | null;
  flavor?: string;
  /** Start of the UTC day or month, with `groupBy` day or month. */
  periodStart?: Date;
  /** Accelerator-seconds held in the window (exact to the millisecond of the transitions). */
  acceleratorSeconds: number;
  /**
   * The part of it thrown away: a run released by failure or a requeue, or — for a preemption or a move —
   * only the work after the checkpoint it resumes from (what the scheduler said it loses).
   */
  wastedAcceleratorSeconds: number;
  /** Σ accelerator-hours × the flavor's costPerHour in force at each moment. */
  cost: number;
  /** Jobs whose holding ended in SUCCEEDED within the window (in the period of their end). */
  jobsCompleted: number;
}

const TIME_BUCKET: Record<'day' | 'month', string> = { day: '1 day', month: '1 month' };

/**
 * Usage in a window from the ledger (usage_segments), clipped to the window, to each UTC day or month
 * when grouped by one, and to each price period of the flavor (flavor_prices), so a holding over a period
 * boundary or a price change counts on each side for exactly its seconds there.
 */
export async function readUsage(sql: Queryable, w: UsageWindow): Promise<UsageRow[]> {
  const time = w.groupBy.includes('day') ? 'day' : w.groupBy.includes('month') ? 'month' : null;
  const byTeam = w.groupBy.includes('team');
  const byUser = w.groupBy.includes('user');
  const byFlavor = w.groupBy.includes('flavor');
  const groupCols = [byTeam ? 'team' : null, byUser ? 'usr' : null, byUser ? 'utok' : null, byFlavor ? 'flavor' : null, time !== null ? 'b_from' : null].filter((c): c is string => c !== null);
  const select = groupCols.length === 0 ? '' : `${groupCols.join(', ')}, `;
  const groupBy = groupCols.length === 0 ? '' : `GROUP BY ${groupCols.join(', ')}`;
  const buckets =
    time === null
      ? 'SELECT $1::timestamptz AS b_from, $2::timestamptz AS b_to'
      : `SELECT d AT TIME ZONE 'UTC' AS b_from, (d + interval '${TIME_BUCKET[time]}') AT TIME ZONE 'UTC' AS b_to
         FROM generate_series(date_trunc('${time}', $1::timestamptz AT TIME ZONE 'UTC'), $2::timestamptz AT TIME ZONE 'UTC', interval '${TIME_BUCKET[time]}') AS d`;
  const values = [w.from, w.to, w.now, w.teams === undefined ? null : [...w.teams]];
  // Who submitted a segment's job: only joined when grouped by user.
  const userCol = byUser ? `, ${USER_SQL}, ${USER_TOKEN_SQL}` : '';
  const held = await sql.query<{ team?: string; usr?: string; utok?: string | null; flavor?: string; b_from?: Date; seconds: string | null; wasted: string | null; cost: number | null }>(
    `WITH seg AS (
       SELECT s.team, s.flavor, s.accelerators, s.wasted, s.wasted_since,
              GREATEST(s.started_at, $1::timestamptz) AS a, LEAST(COALESCE(s.ended_at, $3::timestamptz), $2::timestamptz) AS b${userCol}
       FROM usage_segments s ${byUser ? USER_JOIN : ''}
       WHERE s.started_at < $2 AND (s.ended_at > $1 OR s.ended_at IS NULL) AND ($4::text[] IS NULL OR s.team = ANY($4::text[]))
     ), price AS (
       SELECT flavor, cost_per_hour,
              CASE WHEN row_number() OVER w = 1 THEN '-infinity'::timestamptz ELSE effective_from END AS p_from,
              COALESCE(lead(effective_from) OVER w, 'infinity'::timestamptz) AS p_to
       FROM flavor_prices WHERE flavor IN (SELECT DISTINCT flavor FROM seg)
       WINDOW w AS (PARTITION BY flavor ORDER BY effective_from, id)
     ), bucket AS (${buckets}
     ), piece AS (
       SELECT seg.team, ${byUser ? 'seg.usr, seg.utok, ' : ''}seg.flavor, seg.wasted, seg.accelerators, bucket.b_from, COALESCE(price.cost_per_hour, 0) AS price,
              extract(epoch FROM LEAST(seg.b, price.p_to, bucket.b_to) - GREATEST(seg.a, price.p_from, bucket.b_from)) AS secs,
              -- the wasted part: from the checkpoint the release kept (wasted_since; GREATEST skips a NULL: the start)
              extract(epoch FROM LEAST(seg.b, price.p_to, bucket.b_to) - GREATEST(seg.a, seg.wasted_since, price.p_from, bucket.b_from)) AS wasted_secs
       FROM seg
       JOIN bucket ON bucket.b_from < seg.b AND bucket.b_to > seg.a
       LEFT JOIN price ON price.flavor = seg.flavor AND price.p_from < seg.b AND price.p_to > seg.a
     )
     SELECT ${select}sum(accelerators * secs)::text AS seconds,
            (sum(accelerators * GREATEST(wasted_secs, 0)) FILTER (WHERE wasted))::text AS wasted,
            sum((accelerators * secs / 3600)::float8 * price) AS cost
     FROM piece WHERE secs > 0 ${groupBy}`,
    values,
  );
  const doneCol = (c: string): string =>
    c === 'b_from' ? `date_trunc('${time}', s.ended_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS b_from` : c === 'usr' ? USER_SQL : c === 'utok' ? USER_TOKEN_SQL : `s.${c}`;
  const done = await sql.query<{ team?: string; usr?: string; utok?: string | null; flavor?: string; b_from?: Date; n: number }>(
    `SELECT ${groupCols.map(doneCol).join(', ')}${groupCols.length ? ', ' : ''}
            count(DISTINCT s.job_id)::int AS n
     FROM usage_segments s ${byUser ? USER_JOIN : ''}
     WHERE s.end_state = 'SUCCEEDED' AND s.ended_at >= $1 AND s.ended_at < LEAST($2::timestamptz, $3::timestamptz)
       AND ($4::text[] IS NULL OR s.team = ANY($4::text[]))
     ${groupCols.length ? `GROUP BY ${groupCols.map((_, i) => i + 1).join(', ')}` : ''}`,
    values,
  );
  type Keyed = { team?: string; usr?: string; utok?: string | null; flavor?: string; b_from?: Date };
  const key = (r: Keyed): string => JSON.stringify([r.team ?? null, r.usr ?? null, r.utok ?? null, r.flavor ?? null, r.b_from?.getTime() ?? null]);
  const out = new Map<string, UsageRow>();
  const row = (r: Keyed): UsageRow => {
    const k = key(r);
    let u = out.get(k);
    if (u === undefined) {
      u = { acceleratorSeconds: 0, wastedAcceleratorSeconds: 0, cost: 0, jobsCompleted: 0 };
      if (byTeam) u.team = r.team!;
      if (byUser) {
        u.user = r.usr!;
        u.userToken = r.utok ?? null;
      }
      if (byFlavor) u.flavor = r.flavor!;
      if (time !== null) u.periodStart = r.b_from!;
      out.set(k, u);
    }
    return u;
  };
  for (const r of held.rows) {
    if (r.seconds === null) continue; // no holding at all in the window (the ungrouped total)
    const u = row(r);
    u.acceleratorSeconds = Number(r.seconds);
    u.wastedAcceleratorSeconds = r.wasted === null ? 0 : Number(r.wasted);
    u.cost = r.cost ?? 0;
  }
  for (const r of done.rows) row(r).jobsCompleted = r.n;
  const order = (u: UsageRow): string => `${u.team ?? ''}\u0000${u.user ?? ''}\u0000${u.userToken ?? ''}\u0000${u.flavor ?? ''}\u0000${u.periodStart?.toISOString() ?? ''}`;
  return [...out.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/** Accelerator-seconds per team and flavor since the ledger began, open holdings counted up to `now`. */
export async function readUsageTotals(sql: Queryable, now: Date): Promise<{ team: string; flavor: string; acceleratorSeconds: number }[]> {
  const { rows } = await sql.query<{ team: string; flavor: string; seconds: string }>(
    `SELECT team, flavor, sum(accelerators * extract(epoch FROM GREATEST(COALESCE(ended_at, $1::timestamptz), started_at) - started_at))::text AS seconds
     FROM usage_segments GROUP BY team, flavor ORDER BY team, flavor`,
    [now],
  );
  return rows.map((r) => ({ team: r.team, flavor: r.flavor, acceleratorSeconds: Number(r.seconds) }));
}
