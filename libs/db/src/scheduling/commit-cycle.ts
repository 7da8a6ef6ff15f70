import type { Admission, CycleResult, PendingReason, Preemption, Reservation } from '#core';
import type { PoolClient } from 'pg';
import { FencingError, InvalidCycleResultError } from './errors.js';
import type { SqlHandle } from './sql-handle.js';
import { UUID } from '../uuid.js';

export interface CommitCycleInput {
  result: CycleResult;
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
  /**
   * Decisions not written because their job moved on since the snapshot (cancelled, already admitted,
   * finished, version changed); the preemptions made for a skipped admission are skipped with it.
   * Skipping only frees capacity, so it never breaks the rules the core enforced.
   */
  skipped: { jobId: string; reason: string }[];
  /** scheduler_cycles.id of this cycle. */
  cycleId: string;
}

const HOLDING = `('ADMITTED', 'BINDING', 'RUNNING')`;

/**
 * Writes one cycle's decisions in ONE transaction, set-based (unnest arrays, a fixed number of
 * statements whatever the cycle's size):
 *
 *   1. fencing   lock the lease row (FOR UPDATE); FencingError unless its token is ours — nothing written
 *   2. admit     PENDING → ADMITTED (state and version checked), allocations inserted
 *   3. preempt   victims still holding → PREEMPTED → PENDING (preemptedBy, preemptionCount+1, queuedAt),
 *                their allocations deleted
 *   4. queue     pending reasons, positions, estimated starts and reservations of the jobs left waiting
 *                (only rows that changed; an event when a job's pending code changes)
 *   5. log       job_transitions and events of every admission and preemption
 *   6. outbox    `bind` per admission, `evict` + `notify` per victim (dedupe key per decision)
 *   7. cycle     the scheduler_cycles row
 *
 * A takeover by another scheduler waits on the lease row lock until this commits or rolls back, and
 * bumps the token, so a deposed leader's later commit fails step 1.
 */
export async function commitCycle(db: SqlHandle, input: CommitCycleInput): Promise<CommitCycleOutcome> {
  validate(input.result);
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const outcome = await writeCycle(client, input);
    await client.query('COMMIT');
    return outcome;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function writeCycle(client: PoolClient, input: CommitCycleInput): Promise<CommitCycleOutcome> {
  const { result, fencing, cycleNumber } = input;
  const at = new Date(input.now);
  const actor = input.actor ?? 'scheduler';
  const skipped: { jobId: string; reason: string }[] = [];

  // 1. fencing
  const lease = await client.query<{ holder: string; fencing_token: string }>(
    'SELECT holder, fencing_token::text AS fencing_token FROM scheduler_leases WHERE name = $1 FOR UPDATE',
    [fencing.leaseName],
  );
  const row = lease.rows[0];
  if (!row || BigInt(row.fencing_token) !== fencing.token) {
    throw new FencingError(
      fencing.leaseName,
      fencing.token,
      row ? { holder: row.holder, fencingToken: BigInt(row.fencing_token) } : null,
    );
  }

  // 2. admit
  const admitted = await admit(client, result.admissions, at, input.versions);
  const admittedSet = new Set(admitted);
  for (const a of result.admissions) {
    if (!admittedSet.has(a.jobId)) skipped.push({ jobId: a.jobId, reason: 'no longer PENDING at its snapshot version' });
  }
  const admissions = result.admissions.filter((a) => admittedSet.has(a.jobId));
  await insertAllocations(client, admissions);

  // 3. preempt (not for admissions that were skipped)
  const skippedPreemptors = new Set(result.admissions.filter((a) => !admittedSet.has(a.jobId)).map((a) => a.jobId));
  const wanted = result.preemptions.filter((p) => {
    if (!skippedPreemptors.has(p.preemptorJobId)) return true;
    skipped.push({ jobId: p.victimJobId, reason: `its preemptor ${p.preemptorJobId} was not admitted` });
    return false;
  });
  const victims = await preempt(client, wanted, at);
  const preemptedSet = new Set(victims.map((v) => v.id));
  for (const p of wanted) {
    if (!preemptedSet.has(p.victimJobId)) skipped.push({ jobId: p.victimJobId, reason: 'no longer holds an allocation' });
  }
  const preemptions = wanted.filter((p) => preemptedSet.has(p.victimJobId));

  // 4. queue
  await updateQueue(client, result.pending, result.reservations, at, actor, cycleNumber);

  // 5. log
  await insertTransitions(client, admissions, preemptions, victims, at, cycleNumber);
  await insertEvents(client, admissions, preemptions, at, actor, cycleNumber);

  // 6. outbox
  const outbox = await insertOutbox(client, admissions, preemptions, fencing.token, cycleNumber);

  // 7. cycle
  const cycle = await client.query<{ id: string }>(
    `INSERT INTO scheduler_cycles (number, leader, fencing_token, started_at, duration_ms, considered, admitted, preempted, reserved, pending)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id::text AS id`,
    [
      cycleNumber,
      input.leader,
      fencing.token.toString(),
      at,
      Math.max(0, Math.round(input.durationMs ?? 0)),
      result.stats.considered,
      admissions.length,
      preemptions.length,
      result.reservations.length,
      result.pending.length,
    ],
  );

  return {
    outbox,
    admitted: admissions.map((a) => a.jobId),
    preempted: preemptions.map((p) => p.victimJobId),
    skipped,
    cycleId: cycle.rows[0]!.id,
  };
}

async function admit(
  client: PoolClient,
  admissions: Admission[],
  at: Date,
  versions: ReadonlyMap<string, number> | undefined,
): Promise<string[]> {
  if (admissions.length === 0) return [];
  const { rows } = await client.query<{ id: string }>(
    `UPDATE jobs j SET state = 'ADMITTED', flavor = a.flavor, admitted_replicas = a.replicas, admitted_at = $5,
            started_at = NULL, finished_at = NULL, pending_code = NULL, pending_message = NULL, pending_position = NULL,
            pending_estimated_start_at = NULL, reservation = NULL, version = j.version + 1, updated_at = $5,
            preempted_jobs = string_to_array(a.preempts, ',')::uuid[]
     FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $6::text[]) AS a(id, flavor, replicas, version, preempts)
     WHERE j.id = a.id AND j.state = 'PENDING' AND (a.version IS NULL OR j.version = a.version)
     RETURNING j.id::text AS id`,
    [
      admissions.map((a) => a.jobId),
      admissions.map((a) => a.flavor),
      admissions.map((a) => a.replicas),
      admissions.map((a) => versions?.get(a.jobId) ?? null),
      at,
      // unnest flattens 2-D arrays, so each admission's victims travel as one comma-joined string.
      admissions.map((a) => a.preempts.join(',')),
    ],
  );
  const done = new Set(rows.map((r) => r.id));
  return admissions.map((a) => a.jobId).filter((id) => done.has(id));
}

async function insertAllocations(client: PoolClient, admissions: Admission[]): Promise<void> {
  if (admissions.length === 0) return;
  const cols = { job: [] as string[], replica: [] as number[], node: [] as string[], flavor: [] as string[], acc: [] as number[], cpu: [] as number[], mem: [] as number[] };
  for (const a of admissions) {
    for (const p of a.placement) {
      cols.job.push(a.jobId);
      cols.replica.push(p.replica);
      cols.node.push(p.node);
      cols.flavor.push(a.flavor);
      cols.acc.push(p.accelerators);
      cols.cpu.push(p.cpuMillis);
      cols.mem.push(p.memoryMiB);
    }
  }
  // A PENDING job holds nothing; clear leftovers so one stale row cannot abort the whole cycle.
  await client.query('DELETE FROM allocations WHERE job_id = ANY($1::uuid[])', [admissions.map((a) => a.jobId)]);
  await client.query(
    `INSERT INTO allocations (job_id, replica, node, flavor, accelerators, cpu_millis, memory_mib)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::int[], $7::int[])`,
    [cols.job, cols.replica, cols.node, cols.flavor, cols.acc, cols.cpu, cols.mem],
  );
}

interface Victim {
  id: string;
  from: string;
}

async function preempt(client: PoolClient, preemptions: Preemption[], at: Date): Promise<Victim[]> {
  if (preemptions.length === 0) return [];
  const ids = preemptions.map((p) => p.victimJobId);
  const holding = await client.query<{ id: string; state: string }>(
    `SELECT id::text AS id, state::text AS state FROM jobs WHERE id = ANY($1::uuid[]) AND state IN ${HOLDING}
     ORDER BY id FOR UPDATE`,
    [ids],
  );
  if (holding.rows.length === 0) return [];
  const from = new Map(holding.rows.map((r) => [r.id, r.state]));
  const live = preemptions.filter((p) => from.has(p.victimJobId));
  await client.query(
    `UPDATE jobs j SET state = 'PENDING', preempted_by = p.preemptor, preemption_count = j.preemption_count + 1,
            queued_at = $4, flavor = NULL, admitted_replicas = NULL, admitted_at = NULL, started_at = NULL,
            pending_code = NULL, pending_message = p.message, pending_position = NULL, pending_estimated_start_at = NULL,
            reservation = NULL, preempted_jobs = '{}', version = j.version + 1, updated_at = $4
     FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS p(id, preemptor, message)
     WHERE j.id = p.id`,
    [live.map((p) => p.victimJobId), live.map((p) => p.preemptorJobId), live.map((p) => p.message), at],
  );
  await client.query('DELETE FROM allocations WHERE job_id = ANY($1::uuid[])', [live.map((p) => p.victimJobId)]);
  return live.map((p) => ({ id: p.victimJobId, from: from.get(p.victimJobId)! }));
}

async function updateQueue(
  client: PoolClient,
  pending: PendingReason[],
  reservations: Reservation[],
  at: Date,
  actor: string,
  cycleNumber: number,
): Promise<void> {
  if (pending.length === 0 && reservations.length === 0) return;
  const reservationOf = new Map(
    reservations.map((r) => [r.jobId, JSON.stringify({ flavor: r.flavor, startAt: r.startAt, nodes: r.nodes })]),
  );
  const byId = new Map(pending.map((p) => [p.jobId, p]));
  const ids = [...byId.keys(), ...[...reservationOf.keys()].filter((id) => !byId.has(id))];
  await client.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::pending_code[], $3::text[], $4::int[], $5::timestamptz[], $6::jsonb[])
         WITH ORDINALITY AS i(id, code, message, position, estimated_start_at, reservation, n)
     ), old AS (
       SELECT j.id, j.team, j.pending_code FROM jobs j JOIN input i ON i.id = j.id WHERE j.state = 'PENDING'
     ), changed AS (
       UPDATE jobs j SET
         pending_code = COALESCE(i.code, j.pending_code),
         pending_message = CASE WHEN i.code IS NULL THEN j.pending_message ELSE i.message END,
         pending_position = CASE WHEN i.code IS NULL THEN j.pending_position ELSE i.position END,
         pending_estimated_start_at = CASE WHEN i.code IS NULL THEN j.pending_estimated_start_at ELSE i.estimated_start_at END,
         reservation = i.reservation
       FROM input i
       WHERE j.id = i.id AND j.state = 'PENDING'
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
     SELECT $7, 'job.pending', o.id, o.team, $8, i.message,
            jsonb_build_object('cycle', $9::bigint, 'code', i.code, 'position', i.position,
                               'estimatedStartAt', i.estimated_start_at, 'previousCode', o.pending_code)
     FROM input i JOIN old o ON o.id = i.id
     WHERE i.code IS NOT NULL AND o.pending_code IS DISTINCT FROM i.code
     ORDER BY i.n`,
    [
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
  );
}

async function insertTransitions(
  client: PoolClient,
  admissions: Admission[],
  preemptions: Preemption[],
  victims: Victim[],
  at: Date,
  cycleNumber: number,
): Promise<void> {
  const job: string[] = [];
  const from: string[] = [];
  const to: string[] = [];
  const reason: string[] = [];
  for (const a of admissions) {
    job.push(a.jobId);
    from.push('PENDING');
    to.push('ADMITTED');
    reason.push(`cycle ${cycleNumber}: admitted ${a.replicas} replica(s) on ${a.flavor}`);
  }
  const fromState = new Map(victims.map((v) => [v.id, v.from]));
  for (const p of preemptions) {
    job.push(p.victimJobId, p.victimJobId);
    from.push(fromState.get(p.victimJobId)!, 'PREEMPTED');
    to.push('PREEMPTED', 'PENDING');
    reason.push(p.message, `cycle ${cycleNumber}: requeued after preemption by ${p.preemptorJobId}`);
  }
  if (job.length === 0) return;
  await client.query(
    `INSERT INTO job_transitions (job_id, "from", "to", at, reason)
     SELECT t.job_id, t.from_state, t.to_state, $5, t.reason
     FROM unnest($1::uuid[], $2::job_state[], $3::job_state[], $4::text[]) WITH ORDINALITY AS t(job_id, from_state, to_state, reason, n)
     ORDER BY t.n`,
    [job, from, to, reason, at],
  );
}

async function insertEvents(
  client: PoolClient,
  admissions: Admission[],
  preemptions: Preemption[],
  at: Date,
  actor: string,
  cycleNumber: number,
): Promise<void> {
  const kind: string[] = [];
  const job: string[] = [];
  const team: string[] = [];
  const message: string[] = [];
  const data: string[] = [];
  for (const a of admissions) {
    const accelerators = a.placement.reduce((sum, p) => sum + p.accelerators, 0);
    const nodes = [...new Set(a.placement.map((p) => p.node))];
    kind.push('job.admitted');
    job.push(a.jobId);
    team.push(a.team);
    message.push(
      `admitted ${a.replicas} replica(s), ${accelerators} ${a.flavor} on ${nodes.length} node(s)` +
        (a.borrowed > 0 ? `, ${a.borrowed} borrowed from the cohort` : '') +
        (a.preempts.length > 0 ? `, preempting ${a.preempts.length} job(s)` : ''),
    );
    data.push(JSON.stringify({ cycle: cycleNumber, flavor: a.flavor, replicas: a.replicas, accelerators, nodes, borrowed: a.borrowed, preempts: a.preempts }));
  }
  for (const p of preemptions) {
    kind.push('job.preempted');
    job.push(p.victimJobId);
    team.push(p.victimTeam);
    message.push(p.message);
    data.push(JSON.stringify({ cycle: cycleNumber, preemptorJobId: p.preemptorJobId, kind: p.kind }));
  }
  if (kind.length === 0) return;
  await client.query(
    `INSERT INTO events (at, kind, job_id, team, actor, message, data)
     SELECT $6, e.kind, e.job_id, e.team, $7, e.message, e.data
     FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS e(kind, job_id, team, message, data, n)
     ORDER BY e.n`,
    [kind, job, team, message, data, at, actor],
  );
}

async function insertOutbox(
  client: PoolClient,
  admissions: Admission[],
  preemptions: Preemption[],
  token: bigint,
  cycleNumber: number,
): Promise<{ id: string; kind: string }[]> {
  const kind: string[] = [];
  const payload: string[] = [];
  const key: string[] = [];
  const decision = `${token}:${cycleNumber}`;
  for (const p of preemptions) {
    kind.push('evict');
    payload.push(JSON.stringify({ jobId: p.victimJobId, preemptorJobId: p.preemptorJobId }));
    key.push(`evict:${p.victimJobId}:${decision}`);
  }
  for (const a of admissions) {
    kind.push('bind');
    payload.push(JSON.stringify({ jobId: a.jobId }));
    key.push(`bind:${a.jobId}:${decision}`);
  }
  for (const p of preemptions) {
    kind.push('notify');
    payload.push(JSON.stringify({ jobId: p.victimJobId, event: 'requeued' }));
    key.push(`notify:requeued:${p.victimJobId}:${decision}`);
  }
  if (kind.length === 0) return [];
  const { rows } = await client.query<{ id: string; kind: string }>(
    `INSERT INTO outbox (kind, payload, dedupe_key)
     SELECT o.kind, o.payload, o.dedupe_key
     FROM unnest($1::text[], $2::jsonb[], $3::text[]) WITH ORDINALITY AS o(kind, payload, dedupe_key, n)
     ORDER BY o.n
     ON CONFLICT (dedupe_key) DO NOTHING
     RETURNING id::text AS id, kind`,
    [kind, payload, key],
  );
  return rows.sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
}

/** Rejects results no correct core produces, before anything is written. */
function validate(result: CycleResult): void {
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
