/**
 * One scheduling cycle: snapshot in, decisions out. Pure and deterministic — it reads no clock
 * (`snapshot.now` is the time), no randomness, and sorts every input by name/id before use.
 *
 * Like Kueue's schedule(), the cycle is a recipe of numbered phases:
 *   1. build state   — nodes' free capacity, quota usage, fair share, release timelines (cycle-state.ts)
 *   2. order         — priority, fair share, submission (or aged expected work), id (ordering.ts)
 *   3. for each job, in order:
 *      a. validate   — unknown team/flavor or malformed numbers → INVALID (validation.ts); a team whose
 *                      budget blocks → BUDGET_EXHAUSTED until its next period (Snapshot.budgetBlocks)
 *      b. assign     — the flavors it may try, in order: listed or fastest first, less those a reservation
 *                      ahead holds back, its home first with relative-speed placement (flavor-assignment.ts)
 *      c. fit        — those flavors in order, without preemption (fit.ts)
 *      d. preempt    — the same flavors again, with the cheapest sufficient victims (preemptor.ts)
 *      e. reserve    — the earliest start from expected end times, within reservationDepth (reservations.ts)
 *      f. explain    — code, message, position, estimated start (reasons.ts)
 *   4. move         — running jobs that checkpoint, to faster flavors left free (moves.ts)
 *   5. result
 */
import { CycleState, type Holding, jobEnd } from './cycle-state.js';
import { FifoGate } from './backfill.js';
import { type FlavorAssignment, Heterogeneity, assignFlavors } from './flavor-assignment.js';
import { runtimeOn } from './flavor-selection.js';
import { tryFlavor } from './fit.js';
import type { Admission, BudgetBlock, CycleResult, JobRole, PendingCode, PendingJob, Preemption, RunningJob, Snapshot } from './model.js';
import { JobQueue, type QueueOrdering } from './ordering.js';
import { planPreemption } from './preemptor.js';
import { borrowedOf } from './quota.js';
import { isMultiRole, minAccelerators, rolesOf } from './roles.js';
import {
  type FlavorFailure,
  admissionLimitMessage,
  declinedMessage,
  explain,
  placedByValueMessage,
  soonerMessage,
} from './reasons.js';
import type { ActiveReservation } from './reservation-book.js';
import { computeReservation } from './reservations.js';
import { type RelativePlan, type SoonerVerdict, finishesSooner, nearHome, runtimeMs } from './relative-placement.js';
import { invalidReason } from './validation.js';
import { sharedIds, strictlyById } from './sorted-input.js';
import { planMoves } from './moves.js';

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
  const hetero = new Heterogeneity(st, pending);
  const ordering: QueueOrdering = opts.ordering === 'shortest-first' ? { kind: 'shortest-first', now: snapshot.now, defaultRuntimeSeconds: opts.defaultExpectedRuntimeSeconds } : { kind: 'fifo' };
  const queue = new JobQueue(pending, (team) => st.share.share(team), ordering);
  const touched = new Set<string>();
  st.onShareChange((team) => touched.add(team));
  const cx: CycleContext = { st, duplicates, admittedPerTeam, fifo, depth, blocked, hetero };

  // 3. Decide each job in order.
  for (let job = queue.next(); job !== undefined; job = queue.next()) {
    const d = decide(cx, job);
    if ('admission' in d) {
      admissions.push(d.admission);
      preemptions.push(...d.preemptions);
      admittedPerTeam.set(job.team, (admittedPerTeam.get(job.team) ?? 0) + 1);
    } else {
      undecided.push(d);
    }
    if (touched.size > 0) {
      for (const t of touched) queue.touch(t);
      touched.clear();
    }
  }

  // 4. Move.
  const moves = planMoves(st);

  // 5. Result.
  return {
    admissions,
    preemptions,
    reservations: st.reservations.active.map((r) => r.reservation),
    ...(moves.length > 0 ? { moves } : {}),
    pending: undecided.map((d, i) => {
      const why = d.forced ?? explain(d.failures, d.reservation && summary(d.reservation));
      const estimatedStartAt = d.reservation?.startAt ?? d.forced?.estimatedStartAt ?? null;
      return { jobId: d.job.id, code: why.code, message: why.message, position: i + 1, estimatedStartAt };
    }),
    stats: { considered: snapshot.pending.length, admitted: admissions.length, preempted: preemptions.length, reserved: st.reservations.count },
  };
}

type Outcome = { admission: Admission; preemptions: Preemption[] } | Decision;

/** What every job's decision in a cycle shares besides the state: gates, limits and relative-speed placement. */
interface CycleContext {
  st: CycleState;
  duplicates: ReadonlySet<PendingJob>;
  admittedPerTeam: ReadonlyMap<string, number>;
  fifo: FifoGate;
  /** Most reservations of the cycle (reservationDepth). */
  depth: number;
  blocked: ReadonlyMap<string, BudgetBlock>;
  hetero: Heterogeneity;
}

/** One job's decision: phases 3a–3f of runCycle. */
function decide(cx: CycleContext, job: PendingJob): Outcome {
  const refused = refusal(cx, job);
  if (refused !== undefined) return refused;
  const assigned = assignFlavors(cx.st, job, cx.fifo, cx.hetero);
  const fit = fitWithoutPreemption(cx, job, assigned);
  if ('admission' in fit) return fit;
  const preempting = fit.declined === 0 ? fitWithPreemption(cx, job, fit.worth, fit.tried) : undefined;
  if (preempting !== undefined) return preempting;
  const failures = [...assigned.open.map((f) => fit.tried.get(f)!), ...assigned.heldBack];
  const reservation = reserve(cx, job, fit.worth, fit.tried, assigned.plan);
  cx.fifo.recordBlocked(job, failures);
  claimWait(cx, job, assigned, fit.tried);
  return { job, failures, reservation };
}

/** 3a. A job that may not be admitted whatever the capacity: invalid, over its team's budget or admission limit. */
function refusal(cx: CycleContext, job: PendingJob): Decision | undefined {
  if (cx.duplicates.has(job)) return { job, failures: [], forced: { code: 'INVALID', message: `invalid job: duplicate id ${job.id}` } };
  const invalid = invalidReason(cx.st, job);
  if (invalid !== null) return { job, failures: [], forced: { code: 'INVALID', message: `invalid job: ${invalid}` } };
  const budget = cx.blocked.get(job.team);
  if (budget !== undefined) return { job, failures: [], forced: { code: 'BUDGET_EXHAUSTED', message: budget.message, estimatedStartAt: budget.until } };
  const limit = cx.st.snapshot.options.maxAdmissionsPerTeamPerCycle;
  if (limit !== null && (cx.admittedPerTeam.get(job.team) ?? 0) >= limit) {
    return { job, failures: [], forced: { code: 'ADMISSION_LIMIT', message: admissionLimitMessage(job.team, limit) } };
  }
  return undefined;
}

/**
 * 3c. The first assigned flavor the job fits on without preemption — with relative-speed placement, its
 * home, or another where it finishes sooner than waiting for its home (relative-placement.ts). Otherwise
 * why each failed, how many fitted but were declined, and the flavors worth preempting or reserving for
 * (with relative-speed placement, its home and those all but as good).
 */
function fitWithoutPreemption(
  cx: CycleContext,
  job: PendingJob,
  { open, plan }: FlavorAssignment,
): { admission: Admission; preemptions: Preemption[] } | { tried: Map<string, FlavorFailure>; declined: number; worth: string[] } {
  const { st, hetero } = cx;
  const tried = new Map<string, FlavorFailure>();
  const declined: ({ flavor: string } & SoonerVerdict)[] = [];
  for (const f of open) {
    const r = tryFlavor(st, job, f);
    if (r.ok) {
      if (plan === undefined) return { admission: admit(st, job, f, r.nodes, [], undefined, r.roleOf), preemptions: [] };
      if (f === plan.home) return { admission: admit(st, job, f, r.nodes, [], placedByValueMessage(f, plan, hetero.market), r.roleOf), preemptions: [] };
      const fs = finishesSooner(st, hetero.waits, plan, job, f, hetero.pendingByFlavors);
      if (fs.sooner) return { admission: admit(st, job, f, r.nodes, [], soonerMessage(f, plan.home, fs.here, fs.home), r.roleOf), preemptions: [] };
      declined.push({ flavor: f, ...fs });
      continue;
    }
    tried.set(f, r.failure);
  }
  if (plan !== undefined) explainDeclined(plan, tried, declined);
  const worth = plan === undefined ? open : open.filter((f) => f === plan.home || nearHome(plan, f));
  return { tried, declined: declined.length, worth };
}

/** 3d. The same flavors with the cheapest sufficient victims (never while a declined flavor fits without any). */
function fitWithPreemption(cx: CycleContext, job: PendingJob, worth: readonly string[], tried: ReadonlyMap<string, FlavorFailure>): { admission: Admission; preemptions: Preemption[] } | undefined {
  if (!cx.st.snapshot.options.preemption) return undefined;
  for (const f of worth) {
    if (!CURABLE.has(tried.get(f)!.code)) continue;
    const pre = planPreemption(cx.st, job, f);
    if (pre !== undefined) return { admission: admit(cx.st, job, f, pre.nodes, pre.victims.map((v) => v.job.id), undefined, pre.roleOf), preemptions: pre.preemptions };
  }
  return undefined;
}

/** 3e. The earliest start within reservationDepth (with relative-speed placement, the earliest expected finish). */
function reserve(cx: CycleContext, job: PendingJob, worth: readonly string[], tried: ReadonlyMap<string, FlavorFailure>, plan: RelativePlan | undefined): ActiveReservation | undefined {
  const { st } = cx;
  if (st.reservations.count >= cx.depth) return undefined;
  let reservation: ActiveReservation | undefined;
  let bestEnd = Infinity;
  for (const f of worth) {
    if (!CURABLE.has(tried.get(f)!.code)) continue;
    const r = computeReservation(st, job, f, job.minReplicas);
    if (r === undefined) continue;
    const end = plan === undefined ? r.startAt : r.startAt + (runtimeOn(job, f, st.flavors) ?? 0) * 1000;
    if (reservation === undefined || end < bestEnd) {
      reservation = r;
      bestEnd = end;
    }
  }
  if (reservation !== undefined) st.reservations.add(reservation);
  return reservation;
}

/** A job left waiting for a flavor it could get by waiting holds a place in that flavor's queue of waits. */
function claimWait(cx: CycleContext, job: PendingJob, { open, plan }: FlavorAssignment, tried: ReadonlyMap<string, FlavorFailure>): void {
  const waitsFor = plan?.home ?? open[0];
  if (cx.hetero.inUse && waitsFor !== undefined && CURABLE.has(tried.get(waitsFor)?.code ?? 'INVALID')) {
    cx.hetero.waits.claim(waitsFor, minAccelerators(job), runtimeMs(cx.st, job, waitsFor));
  }
}

/**
 * Commits an admission to the state and describes it. Victims are already released. `roleOf` (multi-role
 * gangs): each replica's role index, so that each replica holds its own role's shape.
 */
function admit(st: CycleState, job: PendingJob, flavor: string, nodes: number[], preempts: string[], reason?: string, roleOf?: readonly number[]): Admission {
  const e = st.quota.get(job.team, flavor)!;
  const borrowedBefore = borrowedOf(e);
  const roles = roleOf === undefined ? undefined : rolesOf(job);
  const shapeOf = (k: number): JobRole | PendingJob => roles?.[roleOf![k]!] ?? job;
  const replicas = nodes.map((node, k) => {
    const r = shapeOf(k);
    return { node, a: r.acceleratorsPerReplica, c: r.cpuMillisPerReplica, m: r.memoryMiBPerReplica };
  });
  const h: Holding = {
    job,
    flavor,
    replicas,
    accelerators: replicas.reduce((sum, r) => sum + r.a, 0),
    admittedAt: st.now,
    checkpointAt: st.now,
    end: jobEnd(job, st.now, runtimeOn(job, flavor, st.flavors), st.snapshot.options.defaultExpectedRuntimeSeconds, st.now),
    admittedThisCycle: true,
    removed: true,
    preempted: undefined,
    lastPreemptedAt: undefined,
    evicted: false,
    indexed: false,
  };
  st.hold(h);
  const multi = roleOf !== undefined && isMultiRole(job);
  return {
    jobId: job.id,
    team: job.team,
    flavor,
    replicas: nodes.length,
    placement: replicas.map((r, replica) => ({
      replica,
      ...(multi && roles !== undefined ? { role: roles[roleOf[replica]!]!.name } : {}),
      node: st.cluster.nodes[r.node]!.name,
      accelerators: r.a,
      cpuMillis: r.c,
      memoryMiB: r.m,
    })),
    borrowed: borrowedOf(e) - borrowedBefore,
    preempts,
    ...(reason === undefined ? {} : { reason }),
  };
}

/**
 * Pending jobs with a duplicate id are INVALID: of the copies of one id, the first by content (a
 * canonical serialisation, never input order) is kept and the others are marked; a pending job with
 * the id of a running one is marked too. Pending jobs are sorted by id, ties by content.
 */
function dedupe(snapshot: Snapshot): { pending: PendingJob[]; duplicates: Set<PendingJob> } {
  if (strictlyById(snapshot.pending)) {
    // Already sorted and distinct (the usual input): only ids of running jobs can be duplicates.
    const running = snapshot.running;
    const marked = strictlyById(running) ? sharedIds(snapshot.pending, running) : withIdIn(snapshot.pending, running);
    return { pending: [...snapshot.pending], duplicates: new Set(marked) };
  }
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

function withIdIn(pending: readonly PendingJob[], running: readonly RunningJob[]): PendingJob[] {
  const ids = new Set(running.map((r) => r.id));
  return pending.filter((j) => ids.has(j.id));
}

/**
 * A flavor that fits now but was declined (the job finishes sooner waiting for its home, or its slower run would
 * delay the others more than it gains) fails like the home flavor, saying so.
 */
function explainDeclined(plan: RelativePlan, tried: Map<string, FlavorFailure>, declined: readonly ({ flavor: string } & SoonerVerdict)[]): void {
  const home = tried.get(plan.home);
  for (const d of declined) {
    tried.set(d.flavor, { flavor: d.flavor, code: home?.code ?? 'INSUFFICIENT_CAPACITY', message: declinedMessage(plan.home, d.here, d.home, d) });
  }
}

function summary(r: ActiveReservation): { flavor: string; startAt: number; nodes: number } {
  return { flavor: r.flavor, startAt: r.startAt, nodes: r.held.size };
}
