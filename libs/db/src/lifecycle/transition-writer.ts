import { HOLDING_STATES, JOB_STATES, TERMINAL_STATES, TRANSITIONS, type JobState, type PendingCode } from '#core';
import type { Pool, PoolClient } from 'pg';
import { OUTBOX_DEDUPE_SQL, OUTBOX_KINDS, type OutboxEffect, type OutboxKind } from './outbox-kinds.js';

/**
 * THE writer of `jobs.state`: every job state change in every app (cycle commit, API cancel and status
 * reports, Kubernetes phase sync, gang timeout, requeues) is a JobMove given to `moveJobs`. One set-based
 * statement per call, whatever the number of moves, that
 *
 *   - locks and moves only jobs whose current state may go to the target according to the lifecycle
 *     table of libs/core (`WHERE state = ANY(allowed from)`, the table inlined from TRANSITIONS), and,
 *     when asked, only from the given states or at the given version;
 *   - resets the same columns for the same target state (see COLUMNS below): a requeue clears the
 *     admission (flavor, replicas, admitted/started times, victims, allocations) whoever requeues, and
 *     sets where its next run resumes from (`resume_fraction`: the fraction its last checkpoint holds,
 *     for a job that checkpoints; null, from scratch, for one that does not);
 *   - writes the job_transitions row(s) (two when passing through PREEMPTED), the event, the allocations
 *     of an admission and the outbox entries (one dedupe scheme, outbox-kinds.ts).
 *
 * `test/integration/db/transition-writer.test.ts` drives every (from, to) pair through it and checks that
 * no other code writes `jobs.state`.
 */

export type Sql = Pool | PoolClient;

/** Event kinds of job moves: `job.<target state>`, `job.requeued` for a requeue, `job.moved` for a move to a faster flavor. */
export type JobEventKind = `job.${Lowercase<JobState>}` | 'job.requeued' | 'job.moved';

export interface Placement {
  replica: number;
  /** The role of a multi-role gang the replica belongs to. */
  role?: string;
  node: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
}

export interface JobMove {
  jobId: string;
  /** The state the job ends in. */
  to: JobState;
  /** Pass through PREEMPTED on the way (from → PREEMPTED → to, two transitions): a preemption or a requeue of a running gang. */
  via?: 'PREEMPTED';
  /** Only from these states (intersected with the lifecycle table). */
  from?: readonly JobState[];
  /** Only at this jobs.version (optimistic check against a snapshot). */
  version?: number;
  /**
   * Only if another job is, when this statement runs, in `state` (at `version`, if given): a preemption
   * whose preemptor was not admitted by an earlier statement of the same transaction is not made.
   */
  requires?: { jobId: string; state: JobState; version?: number };
  /** Reason of the transition row (of the first, when passing through PREEMPTED). */
  reason: string;
  /** Reason of the PREEMPTED → `to` row (default: `reason`). */
  viaReason?: string;
  /** The event written (default kind `job.<to>`, message `FROM → TO: reason`); data is merged over { from, to }. */
  event?: { kind?: JobEventKind; message?: string; data?: Record<string, unknown> };
  /** Required when `to` is ADMITTED: what was admitted, where. */
  admission?: { flavor: string; replicas: number; preempts: readonly string[]; placement: readonly Placement[] };
  /**
   * When `to` is PENDING: when it may be considered again (default now), why it waits (a pending code, e.g.
   * BUDGET_EXHAUSTED for a job a budget stopped; none by default: the next cycle gives one), who preempted it.
   */
  requeue?: { queuedAt?: Date; pendingCode?: PendingCode; pendingMessage?: string; estimatedStartAt?: Date | null; preemptedBy?: string };
  /** Outbox entries to write with the move. Default: `delete` when it ends (terminal) while holding an allocation, else none. */
  effects?: readonly OutboxEffect[];
  /**
   * A release that keeps the work before a checkpoint (a preemption or a move the scheduler decided): that
   * checkpoint, written on the releasing transition (the first). The usage ledger counts only the work after
   * it as wasted; without it, a wasting release wastes the whole run.
   */
  lostSince?: Date;
}

export type MoveResult =
  | { jobId: string; moved: true; from: JobState; to: JobState; version: number }
  /** Not moved: `state` is the job's state (null: no such job); a repeated job id in one call is moved once (its state after that move). */
  | { jobId: string; moved: false; state: JobState | null };

export interface MoveJobsResult {
  /** One per move, in input order. */
  results: MoveResult[];
  /** Outbox entries written, by ascending id. */
  outbox: { id: string; kind: OutboxKind; jobId: string }[];
}

export interface MoveJobsOptions {
  /** Time of the moves (default the transaction's now()). */
  at?: Date;
  /** Actor of the events (default `scheduler`). */
  actor?: string;
}

/** Default effects of a move to a terminal state: delete what it has in the cluster, if it held anything. */
const END_EFFECTS: readonly OutboxEffect[] = [{ kind: 'delete', ifHeld: true }];

const list = (states: readonly string[]): string => states.map((s) => `'${s}'`).join(', ');

/** The states from which `to` may be reached in one transition (the lifecycle table of libs/core). */
const allowedFrom = (to: JobState): JobState[] => JOB_STATES.filter((f) => TRANSITIONS[f].includes(to));

/** The lifecycle table as SQL: (to_state, allowed_from job_state[]) for every target state. */
export const LIFECYCLE_SQL = `VALUES ${JOB_STATES.map((to) => `('${to}'::job_state, ARRAY[${list(allowedFrom(to))}]::job_state[])`).join(', ')}`;

/**
 * The lifecycle table as an expression: the job_state[] from which the target state `target` (a SQL
 * expression) may be reached. An expression, not a join with the table: joined, the planner (which
 * guesses 100 input rows) scanned the whole input once per target state — 8 × 10,000 rows for a
 * drain-sized commit (EXPLAIN ANALYZE, ~0.3 s).
 */
const allowedFromSql = (target: string): string =>
  `(CASE ${target} ${JOB_STATES.map((to) => `WHEN '${to}' THEN ARRAY[${list(allowedFrom(to))}]::job_state[]`).join(' ')} END)`;

const HOLDING = `(${list(HOLDING_STATES)})`;
const TERMINAL = `(${list(TERMINAL_STATES)})`;
const RELEASE = `('PENDING', 'PREEMPTED')`;

/** What each target state does to the job's columns. */
const COLUMNS = `
  state = l.to_state,
  version = j.version + 1,
  updated_at = l.at,
  flavor = CASE WHEN l.to_state = 'ADMITTED' THEN l.flavor WHEN l.to_state IN ${RELEASE} THEN NULL ELSE j.flavor END,
  admitted_replicas = CASE WHEN l.to_state = 'ADMITTED' THEN l.replicas WHEN l.to_state IN ${RELEASE} THEN NULL ELSE j.admitted_replicas END,
  admitted_at = CASE WHEN l.to_state = 'ADMITTED' THEN l.at WHEN l.to_state IN ${RELEASE} THEN NULL ELSE j.admitted_at END,
  started_at = CASE WHEN l.to_state = 'RUNNING' THEN COALESCE(j.started_at, l.at)
                    WHEN l.to_state = 'ADMITTED' OR l.to_state IN ${RELEASE} THEN NULL ELSE j.started_at END,
  finished_at = CASE WHEN l.to_state IN ${TERMINAL} THEN l.at WHEN l.to_state = 'ADMITTED' THEN NULL ELSE j.finished_at END,
  queued_at = CASE WHEN l.to_state = 'PENDING' THEN COALESCE(l.queued_at, l.at) ELSE j.queued_at END,
  pending_code = CASE WHEN l.to_state = 'PENDING' THEN l.pending_code ELSE NULL END,
  pending_message = CASE WHEN l.to_state = 'PENDING' THEN COALESCE(l.pending_message, l.reason) ELSE NULL END,
  pending_position = NULL,
  pending_estimated_start_at = CASE WHEN l.to_state = 'PENDING' THEN l.estimated_start_at ELSE NULL END,
  reservation = NULL,
  preempted_jobs = CASE WHEN l.to_state = 'ADMITTED' THEN COALESCE(l.preempts, '{}') WHEN l.to_state IN ${RELEASE} THEN '{}' ELSE j.preempted_jobs END,
  preempted_by = COALESCE(l.preempted_by, j.preempted_by),
  preemption_count = j.preemption_count + CASE WHEN l.preempted_by IS NULL THEN 0 ELSE 1 END,
  last_preempted_at = CASE WHEN l.preempted_by IS NULL THEN j.last_preempted_at ELSE l.at END,
  resume_fraction = CASE WHEN l.to_state = 'PENDING' THEN CASE WHEN j.checkpoint IS NOT NULL THEN j.completed_fraction END
                         ELSE j.resume_fraction END`;

const RANK = `CASE x.kind ${OUTBOX_KINDS.map((k, i) => `WHEN '${k}' THEN ${i}`).join(' ')} END`;

const MOVE_SQL = `
WITH input AS (
  SELECT i.*, COALESCE($3::timestamptz, now()) AS at
  FROM jsonb_to_recordset($1::jsonb) AS i(
    n int, id uuid, to_state job_state, via job_state, from_states job_state[], version int, reason text, via_reason text,
    event_kind text, event_message text, event_data jsonb, flavor text, replicas int, preempts uuid[],
    queued_at timestamptz, pending_code pending_code, pending_message text, estimated_start_at timestamptz, preempted_by uuid, outbox jsonb,
    requires_id uuid, requires_state job_state, requires_version int, lost_since timestamptz)
),
locked AS (
  SELECT i.*, j.state AS from_state
  FROM jobs j
  JOIN input i ON i.id = j.id
  WHERE j.state = ANY${allowedFromSql('COALESCE(i.via, i.to_state)')}
    AND (i.via IS NULL OR i.via = ANY${allowedFromSql('i.to_state')})
    AND (i.from_states IS NULL OR j.state = ANY(i.from_states))
    AND (i.version IS NULL OR j.version = i.version)
    AND (i.requires_id IS NULL OR EXISTS (
      SELECT 1 FROM jobs r WHERE r.id = i.requires_id AND r.state = i.requires_state AND (i.requires_version IS NULL OR r.version = i.requires_version)))
  ORDER BY j.id
  FOR UPDATE OF j
),
u AS (
  UPDATE jobs j SET ${COLUMNS}
  FROM locked l WHERE j.id = l.id
  RETURNING j.id, j.team, j.version, l.n, l.at, l.from_state, l.to_state, l.via, l.reason, l.via_reason,
            l.event_kind, l.event_message, l.event_data, l.outbox, l.lost_since
),
transitions AS (
  INSERT INTO job_transitions (job_id, "from", "to", at, reason, lost_since)
  SELECT u.id, s.f, s.t, u.at, s.r, s.l
  FROM u CROSS JOIN LATERAL (VALUES (1, u.from_state, COALESCE(u.via, u.to_state), u.reason, u.lost_since),
                                    (2, u.via, u.to_state, COALESCE(u.via_reason, u.reason), NULL::timestamptz)) AS s(k, f, t, r, l)
  WHERE s.k = 1 OR u.via IS NOT NULL
  ORDER BY u.n, s.k
),
events AS (
  INSERT INTO events (at, kind, job_id, team, actor, message, data)
  SELECT u.at, COALESCE(u.event_kind, 'job.' || lower(u.to_state::text)), u.id, u.team, $4::text,
         COALESCE(u.event_message, u.from_state || ' → ' || u.to_state || ': ' || u.reason),
         jsonb_build_object('from', u.from_state, 'to', u.to_state) || COALESCE(u.event_data, '{}'::jsonb)
  FROM u ORDER BY u.n
),
released AS (
  DELETE FROM allocations a USING u WHERE a.job_id = u.id AND u.to_state NOT IN ${HOLDING}
),
placed AS (
  INSERT INTO allocations (job_id, replica, role, node, flavor, accelerators, cpu_millis, memory_mib)
  SELECT p.job_id, p.replica, p.role, p.node, p.flavor, p.accelerators, p.cpu_millis, p.memory_mib
  FROM jsonb_to_recordset($2::jsonb) AS p(job_id uuid, replica int, role text, node text, flavor text, accelerators int, cpu_millis int, memory_mib int)
  JOIN u ON u.id = p.job_id AND u.to_state = 'ADMITTED'
),
outbox_rows AS (
  INSERT INTO outbox (kind, payload, dedupe_key)
  SELECT x.kind, COALESCE(x.payload, '{}'::jsonb) || jsonb_build_object('jobId', u.id),
         ${OUTBOX_DEDUPE_SQL('x.kind', "COALESCE(x.payload, '{}'::jsonb)", 'u.id', 'u.version')}
  FROM u CROSS JOIN LATERAL jsonb_to_recordset(u.outbox) AS x(kind text, payload jsonb, "ifHeld" boolean)
  WHERE x."ifHeld" IS NOT TRUE OR u.from_state IN ${HOLDING}
  ORDER BY ${RANK}, u.n
  ON CONFLICT (dedupe_key) DO NOTHING
  RETURNING id, kind, payload->>'jobId' AS job_id
)
SELECT
  (SELECT COALESCE(json_agg(json_build_object('n', u.n, 'from', u.from_state, 'to', u.to_state, 'version', u.version)), '[]') FROM u) AS moved,
  (SELECT COALESCE(json_agg(json_build_object('id', o.id::text, 'kind', o.kind, 'jobId', o.job_id) ORDER BY o.id), '[]') FROM outbox_rows o) AS outbox,
  (SELECT COALESCE(json_agg(json_build_object('id', j.id, 'state', j.state)), '[]')
     FROM input i JOIN jobs j ON j.id = i.id WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.id = i.id)) AS current`;

interface MoveRow {
  moved: { n: number; from: JobState; to: JobState; version: number }[];
  outbox: { id: string; kind: OutboxKind; jobId: string }[];
  /** States of the jobs not moved (read in the statement's snapshot). */
  current: { id: string; state: JobState }[];
}

/** One moveJobs statement, ready to send (alone, or with others in one message: see cycle-session.ts). */
export interface MoveStatement {
  text: string;
  values: unknown[];
  /** Reads the statement's one result row. */
  read(rows: readonly unknown[]): MoveJobsResult;
}

/**
 * Moves jobs through the lifecycle, set-based, in one statement (see the top of this file). Moves the
 * lifecycle table refuses (or whose `from`/`version`/`requires` no longer hold) are reported, not thrown:
 * the caller decides whether a refused move is a conflict or a harmless replay.
 */
export async function moveJobs(sql: Sql, moves: readonly JobMove[], options: MoveJobsOptions = {}): Promise<MoveJobsResult> {
  if (moves.length === 0) return { results: [], outbox: [] };
  const statement = moveJobsStatement(moves, options);
  const { rows } = await sql.query(statement.text, statement.values);
  return statement.read(rows);
}

/** The statement moveJobs sends, and how to read its answer. `moves` must not be empty. */
export function moveJobsStatement(moves: readonly JobMove[], options: MoveJobsOptions = {}): MoveStatement {
  const seen = new Set<string>();
  const input: Record<string, unknown>[] = [];
  const placements: Record<string, unknown>[] = [];
  moves.forEach((m, n) => {
    const id = m.jobId.toLowerCase();
    if (seen.has(id)) return; // a job moves at most once per statement: the first move of it wins
    seen.add(id);
    if (m.to === 'ADMITTED' && !m.admission) throw new Error(`moving job ${m.jobId} to ADMITTED needs its admission (flavor, replicas, placement)`);
    // Only the fields a move has (jsonb_to_recordset reads a missing key as NULL): a cycle's 10,000
    // admissions are a third of the JSON with every key.
    const row: Record<string, unknown> = { n, id, to_state: m.to, reason: m.reason };
    const set = (key: string, value: unknown): void => {
      if (value !== undefined && value !== null) row[key] = value;
    };
    set('via', m.via);
    set('from_states', m.from);
    set('version', m.version);
    set('via_reason', m.viaReason);
    set('event_kind', m.event?.kind);
    set('event_message', m.event?.message);
    set('event_data', m.event?.data);
    set('flavor', m.admission?.flavor);
    set('replicas', m.admission?.replicas);
    set('preempts', m.admission?.preempts);
    set('queued_at', m.requeue?.queuedAt?.toISOString());
    set('pending_code', m.requeue?.pendingCode);
    set('pending_message', m.requeue?.pendingMessage);
    set('estimated_start_at', m.requeue?.estimatedStartAt?.toISOString());
    set('preempted_by', m.requeue?.preemptedBy);
    set('outbox', m.effects ?? (TERMINAL_STATES.includes(m.to) ? END_EFFECTS : []));
    set('requires_id', m.requires?.jobId);
    set('requires_state', m.requires?.state);
    set('requires_version', m.requires?.version);
    set('lost_since', m.lostSince?.toISOString());
    input.push(row);
    for (const p of m.admission?.placement ?? []) {
      placements.push({
        job_id: id,
        replica: p.replica,
        ...(p.role === undefined ? {} : { role: p.role }),
        node: p.node,
        flavor: m.admission!.flavor,
        accelerators: p.accelerators,
        cpu_millis: p.cpuMillis,
        memory_mib: p.memoryMiB,
      });
    }
  });
  return {
    text: MOVE_SQL,
    values: [JSON.stringify(input), JSON.stringify(placements), options.at ?? null, options.actor ?? 'scheduler'],
    read: (rows) => readMoves(moves, rows[0] as MoveRow),
  };
}

function readMoves(moves: readonly JobMove[], row: MoveRow): MoveJobsResult {
  const moved = new Map(row.moved.map((r) => [r.n, r]));
  const current = new Map(row.current.map((r) => [r.id, r.state]));
  for (const made of row.moved) current.set(moves[made.n]!.jobId.toLowerCase(), made.to); // a repeated id: the job's state now
  const results = moves.map((m, n): MoveResult => {
    const made = moved.get(n);
    if (made) return { jobId: m.jobId, moved: true, from: made.from, to: made.to, version: made.version };
    return { jobId: m.jobId, moved: false, state: current.get(m.jobId.toLowerCase()) ?? null };
  });
  return { results, outbox: row.outbox };
}

/** Whether `to` can be reached from `from` by one move (directly, or through PREEMPTED with `via`). */
export function canMove(from: JobState, to: JobState, via?: 'PREEMPTED'): boolean {
  if (via === undefined) return TRANSITIONS[from].includes(to);
  return TRANSITIONS[from].includes(via) && TRANSITIONS[via].includes(to);
}
