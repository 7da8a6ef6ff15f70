/**
 * What a used-up team budget does to jobs (docs/adr/0023-budget-stop.md). The app decides from its usage
 * ledger which budgets are used up now; the core decides what that does:
 *
 *   warn   nothing here: events and metrics only (the app's).
 *   block  the team's pending jobs are not admitted until the budget's next period (`Snapshot.budgetBlocks`,
 *          runCycle 3a: BUDGET_EXHAUSTED); its running jobs go on, so the team can overshoot its limit.
 *   stop   as block, and the team's running jobs that count against the budget are stopped in the same cycle
 *          (`BudgetedSnapshot.budgetStops` → `BudgetedCycleResult.budgetStops`): each is requeued as a
 *          preemption would requeue it — evicted with its checkpoint grace period, PENDING with
 *          BUDGET_EXHAUSTED until the next period — and resumes from its checkpoint when it runs again.
 *
 * `runBudgetedCycle` is runCycle with the stops: they are decided first, and the cycle is run on the snapshot
 * as the stops leave it (their capacity is free for the other teams at once, none of them is picked as a
 * victim or moved), which is also what `checkBudgetedCycle` (the scheduler's guard) checks the decisions
 * against. Pure and deterministic like the rest of the core.
 */
import { lastCheckpoint } from './cycle-state.js';
import { runCycle } from './cycle.js';
import { checkSafetyInvariants, type Violation } from './invariants.js';
import { isoTime } from './iso-time.js';
import type { BudgetBlock, CycleResult, RunningJob, Snapshot } from './model.js';

/** A used-up budget whose `onExhausted` is `stop` (the app reads it from its usage ledger). */
export interface BudgetStopRule {
  team: string;
  /** The budget's period kind (`day`, `week`, `month`): names the budget in messages and events. */
  period: string;
  /**
   * What it counts: `accelerator-hours` — every job holding accelerators; `currency` — jobs on a flavor with a
   * price (costPerHour > 0; a flavor the snapshot does not know counts).
   */
  unit: 'accelerator-hours' | 'currency';
  /** Epoch ms when its next period begins: the stopped jobs wait until then (their estimated start). */
  until: number;
  /** The budget and its figures, e.g. `team vision used 2.5 of 0.5 accelerator-hours of its day budget (2026-12-07)`. */
  message: string;
}

/** A snapshot with the used-up `stop` budgets (their teams are blocked too, whether or not `budgetBlocks` lists them). */
export type BudgetedSnapshot = Snapshot & { budgetStops?: BudgetStopRule[] };

/** A running job a `stop` budget stops: requeued (→ PREEMPTED → PENDING) with its grace period, as a preemption. */
export interface BudgetStop {
  jobId: string;
  team: string;
  /** Flavor it ran on, and the accelerators it held. */
  flavor: string;
  accelerators: number;
  /** The budget that stops it (its period kind) and when that budget's next period begins (epoch ms). */
  period: string;
  until: number;
  /** Accelerator-seconds of work since its last checkpoint (its admission without one), lost. */
  lostAcceleratorSeconds: number;
  /** Epoch ms of the checkpoint it resumes from (its admission when it does not checkpoint). */
  lostSince: number;
  /** Its checkpoint grace period (seconds) to evict it with; 0 when it does not checkpoint. */
  gracePeriodSeconds: number;
  /** e.g. `stopped: team vision used 2.5 of 0.5 accelerator-hours of its day budget (2026-12-07); requeued until the next period, from 2026-12-08T00:00:00.000Z`. */
  message: string;
}

/** A cycle's decisions plus the running jobs stopped by `stop` budgets (absent or empty: none), by team then id. */
export type BudgetedCycleResult = CycleResult & { budgetStops?: BudgetStop[] };

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The running jobs the snapshot's `stop` budgets stop now: every job of the budget's team that counts against
 * it — holding accelerators, and for a `currency` budget on a flavor with a price — whatever its priority and
 * whether or not it may be preempted (`preemptible: false` shields a job from other jobs, not from its own
 * team's budget). A job several budgets stop is stopped by the one whose period ends last (it waits until
 * then anyway). By team, then job id.
 */
export function planBudgetStops(snapshot: BudgetedSnapshot): BudgetStop[] {
  const rules = snapshot.budgetStops ?? [];
  if (rules.length === 0) return [];
  const byTeam = new Map<string, BudgetStopRule[]>();
  for (const r of [...rules].sort((a, b) => byString(a.team, b.team) || b.until - a.until || byString(a.period, b.period))) {
    byTeam.set(r.team, [...(byTeam.get(r.team) ?? []), r]);
  }
  const price = new Map(snapshot.flavors.map((f) => [f.name, f.costPerHour]));
  const stops: BudgetStop[] = [];
  for (const job of snapshot.running) {
    const accelerators = job.placement.reduce((sum, p) => sum + (Number.isFinite(p.accelerators) ? p.accelerators : 0), 0);
    if (accelerators <= 0) continue;
    const cost = price.get(job.flavor);
    const priced = cost === undefined || cost > 0; // a flavor the snapshot does not know counts
    const rule = byTeam.get(job.team)?.find((r) => r.unit === 'accelerator-hours' || priced);
    if (rule !== undefined) stops.push(stopOf(job, accelerators, rule, snapshot.now));
  }
  return stops.sort((a, b) => byString(a.team, b.team) || byString(a.jobId, b.jobId));
}

function stopOf(job: RunningJob, accelerators: number, rule: BudgetStopRule, now: number): BudgetStop {
  const lostSince = Math.min(lastCheckpoint(job, now), now);
  const lostAcceleratorSeconds = (accelerators * Math.max(0, now - lostSince)) / 1000;
  const cp = job.checkpoint;
  const grace = cp !== undefined && cp.gracePeriodSeconds > 0 && Number.isFinite(cp.gracePeriodSeconds) ? cp.gracePeriodSeconds : 0;
  const resumes =
    cp === undefined
      ? '; it does not checkpoint: its next run starts from scratch'
      : `; resumes from its checkpoint at ${isoTime(lostSince)} (loses ${(lostAcceleratorSeconds / 3600).toFixed(1)} accelerator-hours)`;
  return {
    jobId: job.id,
    team: job.team,
    flavor: job.flavor,
    accelerators,
    period: rule.period,
    until: rule.until,
    lostAcceleratorSeconds,
    lostSince,
    gracePeriodSeconds: grace,
    message: `stopped: ${rule.message}; requeued until the next period, from ${isoTime(rule.until)}${resumes}`,
  };
}

/** The snapshot as `stops` leave it: the stopped jobs no longer run. */
export function withoutStopped(snapshot: Snapshot, stops: readonly BudgetStop[]): Snapshot {
  if (stops.length === 0) return snapshot;
  const stopped = new Set(stops.map((s) => s.jobId));
  return { ...snapshot, running: snapshot.running.filter((j) => !stopped.has(j.id)) };
}

/**
 * The teams whose budget blocks new jobs: `budgetBlocks`, and every team a `stop` budget stops (until the
 * latest end of its blocking budgets). The same array when the stop budgets add nothing.
 */
function blocksWithStops(snapshot: BudgetedSnapshot): BudgetBlock[] | undefined {
  const blocks = snapshot.budgetBlocks;
  const rules = snapshot.budgetStops ?? [];
  const byTeam = new Map((blocks ?? []).map((b) => [b.team, b]));
  let changed = false;
  for (const r of rules) {
    const b = byTeam.get(r.team);
    if (b !== undefined && b.until >= r.until) continue;
    byTeam.set(r.team, { team: r.team, until: r.until, message: `${r.message}; new and stopped jobs wait for the next period, from ${isoTime(r.until)}` });
    changed = true;
  }
  return changed ? [...byTeam.values()].sort((a, b) => byString(a.team, b.team)) : blocks;
}

/**
 * One scheduling cycle with team budgets: the running jobs `stop` budgets stop (planBudgetStops), then
 * runCycle on the snapshot without them, their teams blocked. Without `stop` budgets, exactly runCycle.
 */
export function runBudgetedCycle(snapshot: BudgetedSnapshot): BudgetedCycleResult {
  const rules = snapshot.budgetStops ?? [];
  if (rules.length === 0) return runCycle(snapshot);
  const stops = planBudgetStops(snapshot);
  const blocks = blocksWithStops(snapshot);
  const result = runCycle({ ...withoutStopped(snapshot, stops), ...(blocks === undefined ? {} : { budgetBlocks: blocks }) });
  return stops.length === 0 ? result : { ...result, budgetStops: stops };
}

/**
 * The scheduler's guard with budget stops: each stop names a running job of the snapshot, once, that a
 * used-up `stop` budget of its team covers; the other decisions are checked (checkSafetyInvariants) against
 * the snapshot as the stops leave it — so a stopped job can be neither admitted, preempted nor moved too.
 */
export function checkBudgetedCycle(snapshot: BudgetedSnapshot, result: BudgetedCycleResult): Violation[] {
  const stops = result.budgetStops ?? [];
  if (stops.length === 0) return checkSafetyInvariants(snapshot, result);
  const out: Violation[] = [];
  const running = new Map(snapshot.running.map((j) => [j.id, j]));
  const covered = new Set(planBudgetStops(snapshot).map((s) => s.jobId));
  const seen = new Set<string>();
  for (const s of stops) {
    if (!running.has(s.jobId)) {
      out.push({ rule: 5, code: 'UNKNOWN_JOB', jobId: s.jobId, message: `budget stop of ${s.jobId}, which is not a running job of the snapshot` });
    } else if (seen.has(s.jobId)) {
      out.push({ rule: 5, code: 'DUPLICATE_DECISION', jobId: s.jobId, message: `job ${s.jobId} is stopped twice in one cycle` });
    } else if (!covered.has(s.jobId)) {
      out.push({ rule: 4, code: 'BUDGET_STOP_UNCOVERED', jobId: s.jobId, message: `job ${s.jobId} of team ${running.get(s.jobId)!.team} is stopped, but no used-up stop budget of its team counts it` });
    }
    seen.add(s.jobId);
  }
  return [...out, ...checkSafetyInvariants(withoutStopped(snapshot, stops), result)];
}
