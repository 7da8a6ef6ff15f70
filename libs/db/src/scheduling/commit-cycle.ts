import type { Admission, BudgetStop, BudgetedCycleResult, Move, PendingReason, Preemption, Reservation } from '#core';
import type { PoolClient, QueryResult } from 'pg';
import { moveJobsStatement, type JobMove, type MoveStatement } from '../lifecycle/transition-writer.js';
import { OUTBOX_KINDS, type OutboxKind } from '../lifecycle/outbox-kinds.js';
import { FencingError, InvalidCycleResultError } from './errors.js';
import type { SqlHandle } from './sql-handle.js';
import { literal, message, type Statement } from './sql-message.js';
import { UUID } from '../uuid.js';

export interface CommitCycleInput {
  /** The decisions, with the running jobs used-up `stop` budgets stop (budgetStops). */
  result: BudgetedCycleResult;
  /** Epoch ms: the cycle's time (snapshot.now); stamps every row written. */
  now: number;
  /** The lease this process believes it holds, and its token. Checked first, under a row lock. */
  fencing: { leaseName: string; token: bigint };
  cycleNumber: number;
  /** Lease holder id of this process (recorded on the cycle row). */
  leader: string;
  /** Wall time of the cycle so far, recorded on the cycle row (default 0). */
  durationMs?: number;
  /**
   * jobs.version of the snapshot (loadSnapshotWithVersions): an admission whose job changed since is
   * skipped. Without it, admissions only require the job to still be PENDING.
   */
  versions?: ReadonlyMap<string, number>;
  /** Actor of the events written (default `scheduler`). */
  actor?: string;
}

export interface CommitCycleOutcome {
  /** Outbox entries written (bind/evict/notify), for the relay to enqueue at once. */
  outbox: { id: string; kind: string }[];
  /** Jobs admitted (PENDING → ADMITTED), in decision order. */
  admitted: string[];
  /** Jobs preempted and requeued (→ PREEMPTED → PENDING). */
  preempted: string[];
  /** Jobs moved to a faster flavor (→ PREEMPTED → PENDING → ADMITTED on the new flavor). */
  moved: string[];
  /** Running jobs stopped by a used-up `stop` budget (→ PREEMPTED → PENDING, BUDGET_EXHAUSTED). */
  stopped: string[];
  /**
   * Decisions not written because their job moved on since the snapshot (cancelled, already admitted,
   * finished, version changed); the preemptions made for a skipped admission are skipped with it.
   * Skipping only frees capacity, so it never breaks the rules the core enforced.
   */
  skipped: { jobId: string; reason: string }[];
  /** scheduler_cycles.id of this cycle. */
  cycleId: string;
}

/**
 * Writes one cycle's decisions in ONE transaction, sent as ONE message (one round trip, whatever the
 * cycle's size; see sql-message.ts), set-based (a fixed number of statements):
 *
 *   1. fencing   lock the lease row (FOR KEY SHARE); FencingError unless its token is ours — nothing written
 *   1b. stop     running jobs a used-up `stop` budget stops (whatever their version: see below): → PREEMPTED → PENDING
 *                with BUDGET_EXHAUSTED until the budget's next period, allocations deleted, `evict` (with their
 *                grace period) + `notify`; then one `budget.stopped` event per budget naming the jobs it
 *                stopped. First, so that what they held is free for the admissions below (the core decided
 *                them on the snapshot without these jobs), and so that no later step moves a stopped job
 *   2. admit     PENDING → ADMITTED (state and version checked), allocations inserted
 *   3. preempt   victims still holding → PREEMPTED → PENDING (preemptedBy, preemptionCount+1, queuedAt),
 *                their allocations deleted — only for a preemptor that step 2 admitted
 *                (2 and 3 go through the transition writer, libs/db/src/lifecycle: with the state change
 *                it writes the job_transitions, the events and the outbox entries, `bind` per admission,
 *                `evict` + `notify` per victim)
 *   3b. move     running jobs moved to a faster flavor: → PREEMPTED → PENDING (`evict` with their grace
 *                period), then PENDING → ADMITTED on the new flavor (`bind`), two moves of the transition
 *                writer; the second only for a job the first moved (its version, one more than the snapshot's)
 *   4. queue     pending reasons, positions, estimated starts and reservations of the jobs left waiting
 *                (only rows that changed; an event when a job's pending code changes)
 *   5. cycle     the scheduler_cycles row
 *
 * A takeover by another scheduler (FOR UPDATE, see acquireOrRenewLease) waits on the lease row lock until
 * this commits or rolls back, and bumps the token, so a deposed leader's later commit fails step 1. The
 * leader's own renewals (FOR NO KEY UPDATE) do not wait for it: a long commit does not cost the lease.
 */
export async function commitCycle(db: SqlHandle, input: CommitCycleInput): Promise<CommitCycleOutcome> {
  const commit = cycleCommit(input);
  const client = await db.pool.connect();
  try {
    const results = await runMessage(client, commit.statements);
    return commit.read(results);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw fencingErrorOf(error, input.fencing) ?? error;
  } finally {
    client.release();
  }
}

/** Sends the statements as one message and returns one result per statement. */
export async function runMessage(client: PoolClient, statements: readonly (Statement | string)[]): Promise<QueryResult[]> {
  const result = (await client.query(message(statements))) as QueryResult | QueryResult[];
  return Array.isArray(result) ? result : [result];
}

/** A cycle's commit as statements (BEGIN … COMMIT) and how to read their results. */
export interface CycleCommit {
  statements: (Statement | string)[];
  read(results: readonly QueryResult[]): CommitCycleOutcome;
}

/**
 * The statements of a cycle's commit, BEGIN to COMMIT (see commitCycle). `extra` statements go just
 * before the COMMIT. Throws InvalidCycleResultError for results no correct core produces.
 */
export function cycleCommit(input: CommitCycleInput, extra: readonly string[] = []): CycleCommit {
  const { result, fencing, cycleNumber } = input;
  validate(result);
  const at = new Date(input.now);
  const actor = input.actor ?? 'scheduler';
  const statements: (Statement | string)[] = ['BEGIN', `SET LOCAL work_mem = '${COMMIT_WORK_MEM}'`, fencingStatement(fencing)];
  const push = (s: Statement | string): number => statements.push(s) - 1;

  // 1b. stop (transition writer: requeue with BUDGET_EXHAUSTED, `evict` + `notify`), and the budgets' events
  const stops = result.budgetStops ?? [];
  let stop: { at: number; statement: MoveStatement } | null = null;
  if (stops.length > 0) {
    // Not at the snapshot version (unlike a move): a job that reported RUNNING since still holds what the core
    // gave away in this cycle's admissions, so it is stopped whatever its version. Skipped only when it holds
    // nothing any more (it ended, or was requeued) — which frees the same capacity.
    const statement = moveJobsStatement(stops.map((s) => budgetStopMove(s, cycleNumber)), { at, actor });
    stop = { at: push(statement), statement };
    push(budgetStoppedEventsStatement(stops, at, actor, cycleNumber));
  }

  // 2. admit (transition writer: PENDING → ADMITTED at the snapshot version, allocations, events, `bind`)
  // A PENDING job holds nothing; clear leftovers so one stale row cannot abort the whole cycle.
  let admit: { at: number; statement: MoveStatement } | null = null;
  if (result.admissions.length > 0) {
    push({ text: 'DELETE FROM allocations WHERE job_id = ANY($1::uuid[])', values: [result.admissions.map((a) => a.jobId)] });
    const statement = moveJobsStatement(result.admissions.map((a) => admissionMove(a, input.versions, cycleNumber)), { at, actor });
    admit = { at: push(statement), statement };
  }
  // 3. preempt: holding → PREEMPTED → PENDING, `evict` + `notify`, if its preemptor was admitted by 2
  const admittedVersion = (jobId: string): number | undefined => {
    const v = input.versions?.get(jobId);
    return v === undefined ? undefined : v + 1;
  };
  let preempt: { at: number; statement: MoveStatement } | null = null;
  if (result.preemptions.length > 0) {
    const statement = moveJobsStatement(result.preemptions.map((p) => preemptionMove(p, at, cycleNumber, admittedVersion(p.preemptorJobId))), { at, actor });
    preempt = { at: push(statement), statement };
  }
  // 3b. move (transition writer: requeue with `evict`, then admission on the new flavor with `bind`)
  const moves = result.moves ?? [];
  let moveOut: { at: number; statement: MoveStatement } | null = null;
  let moveIn: { at: number; statement: MoveStatement } | null = null;
  if (moves.length > 0) {
    const out = moveJobsStatement(moves.map((m) => moveOutMove(m, cycleNumber, input.versions?.get(m.jobId))), { at, actor });
    moveOut = { at: push(out), statement: out };
    // A moved-out job holds nothing; clear leftovers (only of the jobs that did move out: now PENDING).
    push({
      text: `DELETE FROM allocations a USING jobs j WHERE a.job_id = j.id AND j.state = 'PENDING' AND a.job_id = ANY($1::uuid[])`,
      values: [moves.map((m) => m.jobId)],
    });
    const into = moveJobsStatement(moves.map((m) => moveInMove(m, cycleNumber, admittedVersion(m.jobId))), { at, actor });
    moveIn = { at: push(into), statement: into };
  }
  // 4. queue
  const queue = queueStatement(result.pending, result.reservations, at, actor, cycleNumber);
  if (queue) push(queue);
  for (const s of extra) push(s);
  // 5. cycle (what was written: a decision skipped in 2 or 3 is not counted)
  const admittedIds = result.admissions.map((a) => a.jobId);
  const victimIds = result.preemptions.map((p) => p.victimJobId);
  const cycleAt = push({
    text: `INSERT INTO scheduler_cycles (number, leader, fencing_token, started_at, duration_ms, considered, admitted, preempted, reserved, pending)
     VALUES ($1::bigint, $2::text, $3::bigint, $4::timestamptz, $5::int, $6::int,
             ${admittedIds.length === 0 ? '0' : `(SELECT count(*) FROM jobs WHERE id = ANY($7::uuid[]) AND state = 'ADMITTED' AND admitted_at = $4::timestamptz)`},
             ${victimIds.length === 0 ? '0' : `(SELECT count(DISTINCT job_id) FROM job_transitions WHERE job_id = ANY($8::uuid[]) AND "to" = 'PREEMPTED' AND at = $4::timestamptz)`},
             $9::int, $10::int)
     RETURNING id::text AS id`,
    values: [
      cycleNumber,
      input.leader,
      fencing.token.toString(),
      at,
      Math.max(0, Math.round(input.durationMs ?? 0)),
      result.stats.considered,
      admittedIds,
      victimIds,
      result.reservations.length,
      result.pending.length,
    ],
  });
  push('COMMIT');

  return {
    statements,
    read(results) {
      const skipped: { jobId: string; reason: string }[] = [];
      const stopMoves = stop ? stop.statement.read(results[stop.at]!.rows) : { results: [], outbox: [] };
      const stoppedSet = new Set(stopMoves.results.filter((r) => r.moved).map((r) => r.jobId));
      for (const s of stops) {
        if (!stoppedSet.has(s.jobId)) skipped.push({ jobId: s.jobId, reason: 'no longer holds an allocation' });
      }
      const admittedMoves = admit ? admit.statement.read(results[admit.at]!.rows) : { results: [], outbox: [] };
      const admittedSet = new Set(admittedMoves.results.filter((r) => r.moved).map((r) => r.jobId));
      for (const a of result.admissions) {
        if (!admittedSet.has(a.jobId)) skipped.push({ jobId: a.jobId, reason: 'no longer PENDING at its snapshot version' });
      }
      const preemptedMoves = preempt ? preempt.statement.read(results[preempt.at]!.rows) : { results: [], outbox: [] };
      const preemptedSet = new Set(preemptedMoves.results.filter((r) => r.moved).map((r) => r.jobId));
      for (const p of result.preemptions) {
        if (preemptedSet.has(p.victimJobId)) continue;
        skipped.push({
          jobId: p.victimJobId,
          reason: admittedSet.has(p.preemptorJobId) ? 'no longer holds an allocation' : `its preemptor ${p.preemptorJobId} was not admitted`,
        });
      }
      const outMoves = moveOut ? moveOut.statement.read(results[moveOut.at]!.rows) : { results: [], outbox: [] };
      const inMoves = moveIn ? moveIn.statement.read(results[moveIn.at]!.rows) : { results: [], outbox: [] };
      const movedOut = new Set(outMoves.results.filter((r) => r.moved).map((r) => r.jobId));
      const movedIn = new Set(inMoves.results.filter((r) => r.moved).map((r) => r.jobId));
      for (const m of moves) {
        if (!movedOut.has(m.jobId)) skipped.push({ jobId: m.jobId, reason: 'no longer holds an allocation at its snapshot version' });
        else if (!movedIn.has(m.jobId)) skipped.push({ jobId: m.jobId, reason: 'requeued but not admitted on its new flavor' });
      }
      // The outbox entries written with the moves, evictions first (a preemptor's bind waits for its victims).
      const rank = (kind: OutboxKind): number => OUTBOX_KINDS.indexOf(kind);
      const outbox = [...stopMoves.outbox, ...admittedMoves.outbox, ...preemptedMoves.outbox, ...outMoves.outbox, ...inMoves.outbox]
        .map(({ id, kind }) => ({ id, kind }))
        .sort((x, y) => rank(x.kind) - rank(y.kind) || (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
      return {
        outbox,
        admitted: result.admissions.filter((a) => admittedSet.has(a.jobId)).map((a) => a.jobId),
        preempted: result.preemptions.filter((p) => preemptedSet.has(p.victimJobId)).map((p) => p.victimJobId),
        moved: moves.filter((m) => movedIn.has(m.jobId)).map((m) => m.jobId),
        stopped: stops.filter((s) => stoppedSet.has(s.jobId)).map((s) => s.jobId),
        skipped,
        cycleId: (results[cycleAt]!.rows[0] as { id: string }).id,
      };
    },
  };
}

/**
 * Sorting and hashing 10,000 moves in the commit's CTEs spilled to temporary files at the default 4 MB
 * (EXPLAIN ANALYZE of a drain-sized commit); the commit's transaction gets more.
 */
const COMMIT_WORK_MEM = '64MB';

/** SQLSTATE the fencing check raises (a class of our own, not one Postgres uses). */
const FENCING_SQLSTATE = 'QMF01';

/**
 * Step 1 as one statement that fails the transaction when the lease is not ours: it locks the lease row
 * (FOR KEY SHARE) and raises FENCING_SQLSTATE with the row's holder and token (JSON in DETAIL) otherwise.
 */
function fencingStatement(fencing: { leaseName: string; token: bigint }): string {
  return `DO $fence$
DECLARE r record;
BEGIN
  SELECT holder, fencing_token INTO r FROM scheduler_leases WHERE name = ${literal(fencing.leaseName)} FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCING_SQLSTATE}', MESSAGE = 'fencing: no lease', DETAIL = 'null';
  ELSIF r.fencing_token <> ${BigInt(fencing.token).toString()} THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCING_SQLSTATE}', MESSAGE = 'fencing: stale token',
      DETAIL = json_build_object('holder', r.holder, 'fencingToken', r.fencing_token::text)::text;
  END IF;
END
$fence$`;
}

/** The FencingError of a commit that failed its fencing check (else null). */
export function fencingErrorOf(error: unknown, fencing: { leaseName: string; token: bigint }): FencingError | null {
  if ((error as { code?: unknown } | null)?.code !== FENCING_SQLSTATE) return null;
  const detail = JSON.parse((error as { detail?: string }).detail ?? 'null') as { holder: string; fencingToken: string } | null;
  return new FencingError(fencing.leaseName, fencing.token, detail === null ? null : { holder: detail.holder, fencingToken: BigInt(detail.fencingToken) });
}

function admissionMove(a: Admission, versions: ReadonlyMap<string, number> | undefined, cycleNumber: number): JobMove {
  const accelerators = a.placement.reduce((sum, p) => sum + p.accelerators, 0);
  const nodes = [...new Set(a.placement.map((p) => p.node))];
  const version = versions?.get(a.jobId);
  return {
    jobId: a.jobId,
    to: 'ADMITTED',
    ...(version === undefined ? {} : { version }),
    reason: `cycle ${cycleNumber}: admitted ${a.replicas} replica(s) on ${a.flavor}`,
    admission: { flavor: a.flavor, replicas: a.replicas, preempts: a.preempts, placement: a.placement },
    event: {
      kind: 'job.admitted',
      message:
        `admitted ${a.replicas} replica(s), ${accelerators} ${a.flavor} on ${nodes.length} node(s)` +
        (a.borrowed > 0 ? `, ${a.borrowed} borrowed from the cohort` : '') +
        (a.preempts.length > 0 ? `, preempting ${a.preempts.length} job(s)` : ''),
      data: { cycle: cycleNumber, flavor: a.flavor, replicas: a.replicas, accelerators, nodes, borrowed: a.borrowed, preempts: a.preempts },
    },
    effects: [{ kind: 'bind' }],
  };
}

function preemptionMove(p: Preemption, at: Date, cycleNumber: number, preemptorVersion: number | undefined): JobMove {
  return {
    jobId: p.victimJobId,
    requires: { jobId: p.preemptorJobId, state: 'ADMITTED', ...(preemptorVersion === undefined ? {} : { version: preemptorVersion }) },
    to: 'PENDING',
    via: 'PREEMPTED',
    reason: p.message,
    viaReason: `cycle ${cycleNumber}: requeued after preemption by ${p.preemptorJobId}`,
    requeue: { queuedAt: at, pendingMessage: p.message, preemptedBy: p.preemptorJobId },
    event: {
      kind: 'job.preempted',
      message: p.message,
      data: {
        cycle: cycleNumber,
        preemptorJobId: p.preemptorJobId,
        kind: p.kind,
        ...(p.lostAcceleratorSeconds === undefined ? {} : { lostAcceleratorSeconds: p.lostAcceleratorSeconds }),
        ...(p.lostSince === undefined ? {} : { lostSince: new Date(p.lostSince).toISOString() }),
      },
    },
    effects: [{ kind: 'evict', payload: { preemptorJobId: p.preemptorJobId } }, { kind: 'notify', payload: { event: 'requeued' } }],
    ...(p.lostSince === undefined ? {} : { lostSince: new Date(p.lostSince) }),
  };
}

/** A gang that holds an allocation (at its snapshot version, when known) back to the queue through PREEMPTED. */
function holdingRequeue(jobId: string, version: number | undefined): Pick<JobMove, 'jobId' | 'to' | 'via' | 'from' | 'version'> {
  return { jobId, to: 'PENDING', via: 'PREEMPTED', from: ['ADMITTED', 'BINDING', 'RUNNING'], ...(version === undefined ? {} : { version }) };
}

/**
 * A running job a used-up `stop` budget stops: requeued as a preemption is — through PREEMPTED, evicted with
 * its grace period, the work after its checkpoint lost — but by no preemptor (its preemption count and
 * anti-thrash time stay), PENDING with BUDGET_EXHAUSTED until the budget's next period.
 */
function budgetStopMove(s: BudgetStop, cycleNumber: number): JobMove {
  const until = new Date(s.until);
  return {
    ...holdingRequeue(s.jobId, undefined),
    reason: `cycle ${cycleNumber}: ${s.message}`,
    viaReason: `cycle ${cycleNumber}: requeued until the ${s.period} budget of team ${s.team} resets at ${until.toISOString()}`,
    requeue: { pendingCode: 'BUDGET_EXHAUSTED', pendingMessage: s.message, estimatedStartAt: until },
    event: {
      kind: 'job.preempted',
      message: s.message,
      data: {
        cycle: cycleNumber,
        cause: 'budget',
        budget: { team: s.team, period: s.period, until: until.toISOString() },
        lostAcceleratorSeconds: s.lostAcceleratorSeconds,
        lostSince: new Date(s.lostSince).toISOString(),
        gracePeriodSeconds: s.gracePeriodSeconds,
      },
    },
    effects: [{ kind: 'evict' }, { kind: 'notify', payload: { event: 'requeued' } }],
    lostSince: new Date(s.lostSince),
  };
}

/**
 * One `budget.stopped` event per used-up budget that stopped jobs in this commit, naming them — only those the
 * stop step did requeue (their PREEMPTED transition at the cycle's time), so a skipped stop is not named.
 */
function budgetStoppedEventsStatement(stops: readonly BudgetStop[], at: Date, actor: string, cycleNumber: number): Statement {
  return {
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS i(id, team, period, until, accelerators, n)
     ), stopped AS (
       SELECT i.*, j.name FROM input i
       JOIN jobs j ON j.id = i.id
       WHERE EXISTS (SELECT 1 FROM job_transitions t WHERE t.job_id = i.id AND t."to" = 'PREEMPTED' AND t.at = $6::timestamptz)
     )
     INSERT INTO events (at, kind, team, actor, message, data)
     SELECT $6::timestamptz, 'budget.stopped', s.team, $7::text,
            s.period || ' budget of team ' || s.team || ' used up: stopped ' || count(*) || ' running job(s) (' ||
              string_agg(s.name, ', ' ORDER BY s.n) || '); they wait for the next period, from ' || s.until,
            jsonb_build_object('cycle', $8::bigint, 'period', s.period, 'until', s.until, 'accelerators', sum(s.accelerators),
                               'jobs', jsonb_agg(jsonb_build_object('jobId', s.id, 'name', s.name, 'accelerators', s.accelerators) ORDER BY s.n))
     FROM stopped s
     GROUP BY s.team, s.period, s.until
     ORDER BY s.team, s.period`,
    values: [
      stops.map((s) => s.jobId),
      stops.map((s) => s.team),
      stops.map((s) => s.period),
      stops.map((s) => new Date(s.until).toISOString()),
      stops.map((s) => s.accelerators),
      at,
      actor,
      cycleNumber,
    ],
  };
}

/** A move's first half: the job leaves its flavor as a preemption does (its grace period to checkpoint). */
function moveOutMove(m: Move, cycleNumber: number, version: number | undefined): JobMove {
  const data = {
    cycle: cycleNumber,
    from: m.from,
    to: m.to,
    expectedEndBefore: new Date(m.expectedEndBefore).toISOString(),
    expectedEndAfter: new Date(m.expectedEndAfter).toISOString(),
    lostAcceleratorSeconds: m.lostAcceleratorSeconds,
    lostSince: new Date(m.lostSince).toISOString(),
  };
  return {
    ...holdingRequeue(m.jobId, version),
    reason: `cycle ${cycleNumber}: ${m.message}`,
    viaReason: `cycle ${cycleNumber}: moving to ${m.to}`,
    requeue: { pendingMessage: m.message },
    event: { kind: 'job.moved', message: m.message, data },
    effects: [{ kind: 'evict' }],
    lostSince: new Date(m.lostSince),
  };
}

/**
 * A move's second half: admitted again, on the faster flavor, in the same commit — at the version the
 * first half left it (one more than the snapshot's), so only a job the first half moved.
 */
function moveInMove(m: Move, cycleNumber: number, version: number | undefined): JobMove {
  const admission: Admission = { jobId: m.jobId, team: m.team, flavor: m.to, replicas: m.replicas, placement: m.placement, borrowed: m.borrowed, preempts: [] };
  const move = admissionMove(admission, undefined, cycleNumber);
  return {
    ...move,
    from: ['PENDING'],
    ...(version === undefined ? {} : { version }),
    reason: `cycle ${cycleNumber}: moved from ${m.from}, admitted ${m.replicas} replica(s) on ${m.to}`,
    event: { ...move.event, message: `${move.event!.message} (moved from ${m.from})` },
  };
}

function queueStatement(
  pending: PendingReason[],
  reservations: Reservation[],
  at: Date,
  actor: string,
  cycleNumber: number,
): Statement | null {
  if (pending.length === 0 && reservations.length === 0) return null;
  const reservationOf = new Map(
    reservations.map((r) => [r.jobId, JSON.stringify({ flavor: r.flavor, startAt: r.startAt, nodes: r.nodes })]),
  );
  const byId = new Map(pending.map((p) => [p.jobId, p]));
  const ids = [...byId.keys(), ...[...reservationOf.keys()].filter((id) => !byId.has(id))];
  return {
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::pending_code[], $3::text[], $4::int[], $5::timestamptz[], $6::jsonb[])
         WITH ORDINALITY AS i(id, code, message, position, estimated_start_at, reservation, n)
     ), old AS (
       SELECT j.id, j.team, j.pending_code FROM jobs j JOIN input i ON i.id = j.id WHERE j.state = 'PENDING' AND j.held_at IS NULL
     ), changed AS (
       UPDATE jobs j SET
         pending_code = COALESCE(i.code, j.pending_code),
         pending_message = CASE WHEN i.code IS NULL THEN j.pending_message ELSE i.message END,
         pending_position = CASE WHEN i.code IS NULL THEN j.pending_position ELSE i.position END,
         pending_estimated_start_at = CASE WHEN i.code IS NULL THEN j.pending_estimated_start_at ELSE i.estimated_start_at END,
         reservation = i.reservation
       FROM input i
       -- A job held after the cycle's snapshot keeps its HELD reason.
       WHERE j.id = i.id AND j.state = 'PENDING' AND j.held_at IS NULL
         AND (j.pending_code, j.pending_message, j.pending_position, j.pending_estimated_start_at, j.reservation)
             IS DISTINCT FROM
             (COALESCE(i.code, j.pending_code),
              CASE WHEN i.code IS NULL THEN j.pending_message ELSE i.message END,
              CASE WHEN i.code IS NULL THEN j.pending_position ELSE i.position END,
              CASE WHEN i.code IS NULL THEN j.pending_estimated_start_at ELSE i.estimated_start_at END,
              i.reservation)
       RETURNING j.id
     )
     INSERT INTO events (at, kind, job_id, team, actor, message, data)
     SELECT $7::timestamptz, 'job.pending', o.id, o.team, $8::text, i.message,
            jsonb_build_object('cycle', $9::bigint, 'code', i.code, 'position', i.position,
                               'estimatedStartAt', i.estimated_start_at, 'previousCode', o.pending_code)
     FROM input i JOIN old o ON o.id = i.id
     WHERE i.code IS NOT NULL AND o.pending_code IS DISTINCT FROM i.code
     ORDER BY i.n`,
    values: [
      ids,
      ids.map((id) => byId.get(id)?.code ?? null),
      ids.map((id) => byId.get(id)?.message ?? null),
      ids.map((id) => byId.get(id)?.position ?? null),
      ids.map((id) => {
        const start = byId.get(id)?.estimatedStartAt;
        return start === undefined || start === null ? null : new Date(start);
      }),
      ids.map((id) => reservationOf.get(id) ?? null),
      at,
      actor,
      cycleNumber,
    ],
  };
}

/** Rejects results no correct core produces, before anything is written. */
function validate(result: BudgetedCycleResult): void {
  const seen = new Set<string>();
  for (const a of result.admissions) {
    if (!UUID.test(a.jobId)) throw new InvalidCycleResultError(`admission jobId ${JSON.stringify(a.jobId)} is not a uuid`);
    if (seen.has(a.jobId)) throw new InvalidCycleResultError(`job ${a.jobId} is admitted twice`);
    seen.add(a.jobId);
    if (!Number.isInteger(a.replicas) || a.replicas < 1) {
      throw new InvalidCycleResultError(`admission of ${a.jobId}: replicas must be a positive integer, got ${a.replicas}`);
    }
    if (a.placement.length !== a.replicas) {
      throw new InvalidCycleResultError(`admission of ${a.jobId}: ${a.placement.length} placements for ${a.replicas} replicas`);
    }
    for (const victim of a.preempts) {
      if (!UUID.test(victim)) throw new InvalidCycleResultError(`admission of ${a.jobId}: preempted id ${JSON.stringify(victim)} is not a uuid`);
    }
    const replicas = new Set(a.placement.map((p) => p.replica));
    for (let i = 0; i < a.replicas; i++) {
      if (!replicas.has(i)) throw new InvalidCycleResultError(`admission of ${a.jobId}: replica ${i} has no placement`);
    }
    for (const p of a.placement) {
      for (const [field, value] of [['accelerators', p.accelerators], ['cpuMillis', p.cpuMillis], ['memoryMiB', p.memoryMiB]] as const) {
        if (!Number.isInteger(value) || value < 0) {
          throw new InvalidCycleResultError(`admission of ${a.jobId}, replica ${p.replica}: ${field} must be a non-negative integer, got ${value}`);
        }
      }
    }
  }
  const victims = new Set<string>();
  for (const p of result.preemptions) {
    if (!UUID.test(p.victimJobId) || !UUID.test(p.preemptorJobId)) {
      throw new InvalidCycleResultError(`preemption ${p.victimJobId} by ${p.preemptorJobId}: ids must be uuids`);
    }
    if (seen.has(p.victimJobId)) throw new InvalidCycleResultError(`job ${p.victimJobId} is both admitted and preempted`);
    if (victims.has(p.victimJobId)) throw new InvalidCycleResultError(`job ${p.victimJobId} is preempted twice`);
    victims.add(p.victimJobId);
  }
  for (const m of result.moves ?? []) {
    if (!UUID.test(m.jobId)) throw new InvalidCycleResultError(`move jobId ${JSON.stringify(m.jobId)} is not a uuid`);
    if (seen.has(m.jobId) || victims.has(m.jobId)) throw new InvalidCycleResultError(`job ${m.jobId} is moved and also admitted or preempted`);
    if (m.placement.length !== m.replicas) throw new InvalidCycleResultError(`move of ${m.jobId}: ${m.placement.length} placements for ${m.replicas} replicas`);
  }
  const moved = new Set((result.moves ?? []).map((m) => m.jobId));
  const stopped = new Set<string>();
  for (const s of result.budgetStops ?? []) {
    if (!UUID.test(s.jobId)) throw new InvalidCycleResultError(`budget stop jobId ${JSON.stringify(s.jobId)} is not a uuid`);
    if (stopped.has(s.jobId)) throw new InvalidCycleResultError(`job ${s.jobId} is stopped twice`);
    if (seen.has(s.jobId) || victims.has(s.jobId) || moved.has(s.jobId)) throw new InvalidCycleResultError(`job ${s.jobId} is stopped and also admitted, preempted or moved`);
    if (!Number.isFinite(s.until)) throw new InvalidCycleResultError(`budget stop of ${s.jobId}: until must be a time, got ${s.until}`);
    stopped.add(s.jobId);
  }
  for (const r of result.pending) {
    if (!UUID.test(r.jobId)) throw new InvalidCycleResultError(`pending jobId ${JSON.stringify(r.jobId)} is not a uuid`);
    if (seen.has(r.jobId)) throw new InvalidCycleResultError(`job ${r.jobId} is both admitted and pending`);
  }
  for (const r of result.reservations) {
    if (!UUID.test(r.jobId)) throw new InvalidCycleResultError(`reservation jobId ${JSON.stringify(r.jobId)} is not a uuid`);
  }
}

/** The number for the next cycle: one more than the last committed (0 → 1). */
export async function nextCycleNumber(db: SqlHandle): Promise<number> {
  const { rows } = await db.pool.query<{ number: string | null }>(
    'SELECT number::text AS number FROM scheduler_cycles ORDER BY id DESC LIMIT 1',
  );
  return rows[0]?.number ? Number(rows[0].number) + 1 : 1;
}
