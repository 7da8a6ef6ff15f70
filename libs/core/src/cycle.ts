/**
 * One scheduling cycle: snapshot in, decisions out. Pure and deterministic — it reads no clock
 * (`snapshot.now` is the time), no randomness, and sorts every input by name/id before use.
 *
 * Like Kueue's schedule(), the cycle is a recipe of numbered phases:
 *   1. build state   — nodes' free capacity, quota usage, fair share, release timelines (cycle-state.ts)
 *   2. order         — priority, fair share, submission, id (ordering.ts)
 *   3. for each job, in order:
 *      a. validate   — unknown team/flavor or malformed numbers → INVALID (validation.ts); a team whose
 *                      budget blocks → BUDGET_EXHAUSTED until its next period (Snapshot.budgetBlocks)
 *      b. fit        — every flavor in selection order, without preemption (fit.ts)
 *      c. preempt    — the same flavors again, with the cheapest sufficient victims (preemptor.ts)
 *      d. reserve    — the earliest start from expected end times, within reservationDepth (reservations.ts)
 *      e. explain    — code, message, position, estimated start (reasons.ts)
 *   4. result
 */
import { CycleState, type Holding, expectedEnd } from './cycle-state.js';
import { FifoGate } from './backfill.js';
import { flavorOrder } from './flavor-selection.js';
import { tryFlavor } from './fit.js';
import type { Admission, BudgetBlock, CycleResult, PendingCode, PendingJob, Preemption, Snapshot } from './model.js';
import { JobQueue } from './ordering.js';
import { planPreemption } from './preemptor.js';
import { borrowedOf } from './quota.js';
import { type FlavorFailure, admissionLimitMessage, explain, fifoMessage } from './reasons.js';
import { type ActiveReservation, computeReservation } from './reservations.js';
import { invalidReason } from './validation.js';

/** Failures that more capacity (freed by preemption, or by time) could cure. */
const CURABLE: ReadonlySet<PendingCode> = new Set([
  'QUOTA_EXCEEDED',
  'COHORT_EXHAUSTED',
  'INSUFFICIENT_CAPACITY',
  'TOPOLOGY_UNSATISFIABLE',
  'BLOCKED_BY_RESERVATION',
]);

interface Decision {
  job: PendingJob;
  failures: FlavorFailure[];
  reservation?: ActiveReservation;
  forced?: { code: PendingCode; message: string; estimatedStartAt?: number };
}

export function runCycle(snapshot: Snapshot): CycleResult {
  // 1. Build state.
  const st = new CycleState(snapshot);
  const opts = snapshot.options;
  const depth = Number.isFinite(opts.reservationDepth) ? Math.max(0, opts.reservationDepth) : 0;
  const fifo = new FifoGate(!opts.backfill);
  const admissions: Admission[] = [];
  const preemptions: Preemption[] = [];
  const undecided: Decision[] = [];
  const admittedPerTeam = new Map<string, number>();
  const blocked = new Map<string, BudgetBlock>((snapshot.budgetBlocks ?? []).map((b) => [b.team, b]));

  // 2. Order.
  const { pending, duplicates } = dedupe(snapshot);
  const queue = new JobQueue(pending, (team) => st.share.share(team));
  const touched = new Set<string>();
  st.onShareChange((team) => touched.add(team));

  // 3. Decide each job in order.
  for (let job = queue.next(); job !== undefined; job = queue.next()) {
    const d = decide(st, job, duplicates, admittedPerTeam, fifo, depth, blocked);
    if ('admission' in d) {
      admissions.push(d.admission);
      preemptions.push(...d.preemptions);
      admittedPerTeam.set(job.team, (admittedPerTeam.get(job.team) ?? 0) + 1);
    } else {
      undecided.push(d);
    }
    for (const t of touched) queue.touch(t);
    touched.clear();
  }

  // 4. Result.
  return {
    admissions,
    preemptions,
    reservations: st.reservations.active.map((r) => r.reservation),
    pending: undecided.map((d, i) => {
      const why = d.forced ?? explain(d.failures, d.reservation && summary(d.reservation));
      const estimatedStartAt = d.reservation?.startAt ?? d.forced?.estimatedStartAt ?? null;
      return { jobId: d.job.id, code: why.code, message: why.message, position: i + 1, estimatedStartAt };
    }),
    stats: { considered: snapshot.pending.length, admitted: admissions.length, preempted: preemptions.length, reserved: st.reservations.count },
  };
}

type Outcome = { admission: Admission; preemptions: Preemption[] } | Decision;

function decide(
  st: CycleState,
  job: PendingJob,
  duplicates: ReadonlySet<PendingJob>,
  admittedPerTeam: ReadonlyMap<string, number>,
  fifo: FifoGate,
  depth: number,
  blocked: ReadonlyMap<string, BudgetBlock>,
): Outcome {
  const opts = st.snapshot.options;
  // a. Validate.
  if (duplicates.has(job)) return { job, failures: [], forced: { code: 'INVALID', message: `invalid job: duplicate id ${job.id}` } };
  const invalid = invalidReason(st, job);
  if (invalid !== null) return { job, failures: [], forced: { code: 'INVALID', message: `invalid job: ${invalid}` } };
  const budget = blocked.get(job.team);
  if (budget !== undefined) return { job, failures: [], forced: { code: 'BUDGET_EXHAUSTED', message: budget.message, estimatedStartAt: budget.until } };
  const limit = opts.maxAdmissionsPerTeamPerCycle;
  if (limit !== null && (admittedPerTeam.get(job.team) ?? 0) >= limit) {
    return { job, failures: [], forced: { code: 'ADMISSION_LIMIT', message: admissionLimitMessage(job.team, limit) } };
  }
  const failures: FlavorFailure[] = [];
  const open: string[] = [];
  for (const f of flavorOrder(job, st.flavors, opts)) {
    const blocker = fifo.blockerOf(job, f);
    if (blocker === undefined) open.push(f);
    else failures.push({ flavor: f, code: 'BLOCKED_BY_RESERVATION', message: fifoMessage(blocker, f) });
  }

  // b. Fit without preemption.
  const tried = new Map<string, FlavorFailure>();
  for (const f of open) {
    const r = tryFlavor(st, job, f);
    if (r.ok) return { admission: admit(st, job, f, r.nodes, []), preemptions: [] };
    tried.set(f, r.failure);
  }

  // c. Fit with preemption.
  if (opts.preemption) {
    for (const f of open) {
      if (!CURABLE.has(tried.get(f)!.code)) continue;
      const plan = planPreemption(st, job, f);
      if (plan !== undefined) {
        return { admission: admit(st, job, f, plan.nodes, plan.victims.map((v) => v.job.id)), preemptions: plan.preemptions };
      }
    }
  }
  failures.unshift(...open.map((f) => tried.get(f)!));

  // d. Reserve the earliest start.
  let reservation: ActiveReservation | undefined;
  if (st.reservations.count < depth) {
    for (const f of open) {
      if (!CURABLE.has(tried.get(f)!.code)) continue;
      const r = computeReservation(st, job, f, job.minReplicas);
      if (r !== undefined && (reservation === undefined || r.startAt < reservation.startAt)) reservation = r;
    }
    if (reservation !== undefined) st.reservations.add(reservation);
  }
  fifo.recordBlocked(job, failures);

  // e. Explain (in runCycle's result phase).
  return { job, failures, reservation };
}

/** Commits an admission to the state and describes it. Victims are already released. */
function admit(st: CycleState, job: PendingJob, flavor: string, nodes: number[], preempts: string[]): Admission {
  const e = st.quota.get(job.team, flavor)!;
  const borrowedBefore = borrowedOf(e);
  const a = job.acceleratorsPerReplica;
  const h: Holding = {
    job,
    flavor,
    replicas: nodes.map((node) => ({ node, a, c: job.cpuMillisPerReplica, m: job.memoryMiBPerReplica })),
    accelerators: a * nodes.length,
    admittedAt: st.now,
    end: expectedEnd(st.now, job.expectedRuntimeSeconds, st.snapshot.options.defaultExpectedRuntimeSeconds, st.now),
    admittedThisCycle: true,
    removed: true,
    preempted: undefined,
    evicted: false,
    indexed: false,
  };
  st.hold(h);
  return {
    jobId: job.id,
    team: job.team,
    flavor,
    replicas: nodes.length,
    placement: nodes.map((node, replica) => ({
      replica,
      node: st.cluster.nodes[node]!.name,
      accelerators: a,
      cpuMillis: job.cpuMillisPerReplica,
      memoryMiB: job.memoryMiBPerReplica,
    })),
    borrowed: borrowedOf(e) - borrowedBefore,
    preempts,
  };
}

/**
 * Pending jobs with a duplicate id are INVALID: of the copies of one id, the first by content (a
 * canonical serialisation, never input order) is kept and the others are marked; a pending job with
 * the id of a running one is marked too. Pending jobs are sorted by id, ties by content.
 */
function dedupe(snapshot: Snapshot): { pending: PendingJob[]; duplicates: Set<PendingJob> } {
  const running = new Set(snapshot.running.map((r) => r.id));
  const count = new Map<string, number>();
  for (const j of snapshot.pending) count.set(j.id, (count.get(j.id) ?? 0) + 1);
  const content = new Map<PendingJob, string>();
  for (const j of snapshot.pending) if (count.get(j.id)! > 1) content.set(j, JSON.stringify(j));
  const cmpContent = (a: PendingJob, b: PendingJob): number => {
    const x = content.get(a) ?? '';
    const y = content.get(b) ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const sorted = [...snapshot.pending].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) || cmpContent(a, b));
  const seen = new Set<string>();
  const duplicates = new Set<PendingJob>();
  for (const j of sorted) {
    if (seen.has(j.id) || running.has(j.id)) duplicates.add(j);
    seen.add(j.id);
  }
  return { pending: sorted, duplicates };
}

function summary(r: ActiveReservation): { flavor: string; startAt: number; nodes: number } {
  return { flavor: r.flavor, startAt: r.startAt, nodes: r.held.size };
}
