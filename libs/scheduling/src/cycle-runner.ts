import { performance } from 'node:perf_hooks';
import { checkBudgetedCycle, formatViolations, type BudgetedCycleResult, type Snapshot, type Violation } from '#core';
import type { Logger } from 'pino';
import type { CycleStore, FencingSource } from './cycle-store.js';
import { PhaseTimer } from './phase-timer.js';
import type { OutboxRef } from './outbox-store.js';

export type CyclePhase = 'lock' | 'snapshot' | 'schedule' | 'check' | 'commit';

export interface CycleReport {
  cycle: number;
  startedAt: number;
  phasesMs: Record<CyclePhase, number>;
  totalMs: number;
  result: BudgetedCycleResult;
  outbox: OutboxRef[];
  /** The snapshot the decisions were made on (for metrics; not serialised). */
  snapshot: Snapshot;
  /** False for an idle cycle (no pending job, no decision): nothing was written. */
  committed: boolean;
}

export class NotLeaderError extends Error {
  readonly code = 'NOT_LEADER' as const;
}

/** The guard found decisions that break a rule of the scheduler: the cycle is not committed. */
export class InvariantViolationError extends Error {
  readonly code = 'INVARIANT_VIOLATION' as const;
  constructor(
    readonly cycle: number,
    readonly violations: readonly Violation[],
  ) {
    super(`cycle ${cycle} broke ${violations.length} scheduler rule(s); nothing was committed:\n${formatViolations(violations)}`);
  }
}

/**
 * Checks a cycle's decisions against its snapshot before they are committed (default: checkBudgetedCycle of
 * #core — checkSafetyInvariants against the snapshot as the cycle's budget stops leave it).
 */
export type CycleGuard = (snapshot: Snapshot, result: BudgetedCycleResult) => Violation[];

export interface CycleObserver {
  onCycle(report: CycleReport): void;
  onCycleFailed?(phase: CyclePhase | 'unknown', error: unknown): void;
}

/**
 * One scheduling cycle, in numbered phases (each timed, the cycle number on every log line):
 *
 *   0. lock      enter the cluster-wide cycle lock — a manual cycle and the loop never overlap
 *   1. snapshot  the cycle's number and its snapshot at `now`: pending jobs, running jobs, nodes, teams,
 *                quotas (PgCycleStore takes the Postgres lock in the same round trip, so its wait counts
 *                here, and reads only what changed since the previous cycle)
 *   2. schedule  run the pure core: snapshot in, decisions out (runBudgetedCycle: with the running jobs
 *                used-up `stop` budgets stop)
 *   3. check     the guard: the decisions against the safety rules (checkSafetyInvariants: consistency,
 *                gangs, capacity, quota);
 *                a violation aborts the cycle before anything is committed (logged with the cycle, counted
 *                by qm_scheduler_invariant_violations_total), and the next cycle starts afresh. From
 *                OVERLAPPED_CHECK_MIN_DECISIONS decisions it runs while Postgres executes the commit's
 *                writes, whose COMMIT is sent only after it passed (a violation rolls them back)
 *   4. commit    one transaction: fencing check, then every decision and its outbox entries
 *
 * Side effects happen only afterwards, from the outbox (see OutboxRelay). A crash anywhere before the
 * commit leaves nothing; after it, the outbox carries the rest.
 */
export class CycleRunner {
  constructor(
    private readonly store: CycleStore,
    private readonly fencing: FencingSource,
    /** The pure core (`runBudgetedCycle` of #core, or `runCycle` without budget stops). */
    private readonly schedule: (snapshot: Snapshot) => BudgetedCycleResult,
    private readonly logger: Logger,
    private readonly observers: CycleObserver[] = [],
    private readonly clock: () => number = Date.now,
    private readonly guard: CycleGuard = checkBudgetedCycle,
  ) {}

  addObserver(observer: CycleObserver): void {
    this.observers.push(observer);
  }

  async runOnce(trigger: string[] = ['manual']): Promise<CycleReport> {
    const timer = new PhaseTimer<CyclePhase>(() => performance.now());
    let phase: CyclePhase | 'unknown' = 'lock';
    let cycleNumber: number | null = null;
    try {
      const lockRequestedAt = performance.now();
      const report = await this.store.withCycleLock(async () => {
        timer.record('lock', performance.now() - lockRequestedAt);
        const fence = await this.fencing.current();
        if (!fence) throw new NotLeaderError('this process does not hold the scheduler lease');
        const startedAt = this.clock();

        phase = 'snapshot';
        const { cycle, snapshot } = await timer.time('snapshot', () => this.store.openCycle(startedAt));
        cycleNumber = cycle;
        const log = this.logger.child({ cycle });
        log.debug(
          {
            trigger,
            phase: '1-snapshot',
            ms: timer.ms('snapshot'),
            lockMs: timer.ms('lock'),
            pending: snapshot.pending.length,
            running: snapshot.running.length,
            nodes: snapshot.nodes.length,
          },
          'snapshot loaded',
        );

        phase = 'schedule';
        const result = await timer.time('schedule', () => this.schedule(snapshot));
        log.debug({ phase: '2-schedule', ms: timer.ms('schedule'), ...result.stats }, 'decisions made');

        phase = 'check';
        const guard = (): void => {
          const violations = this.guard(snapshot, result);
          if (violations.length > 0) {
            log.error(
              { phase: '3-check', violations, admissions: result.admissions, preemptions: result.preemptions, budgetStops: result.budgetStops },
              'decisions break the scheduler rules; cycle aborted, nothing committed',
            );
            throw new InvariantViolationError(cycle, violations);
          }
        };
        const commitStore = this.store.commitCycleChecked?.bind(this.store);
        const overlap = commitStore !== undefined && decisions(result) >= OVERLAPPED_CHECK_MIN_DECISIONS;
        if (!overlap) await timer.time('check', guard);

        phase = 'commit';
        if (isEmpty(result)) {
          // Nothing waits and nothing changes: no transaction, no cycle row (an idle tick costs one snapshot).
          log.debug({ phase: '4-commit', skipped: true }, 'nothing to commit');
          return { cycle, startedAt, result, outbox: [], snapshot, committed: false };
        }
        const input = {
          result,
          now: startedAt,
          fencing: { leaseName: fence.leaseName, token: fence.token },
          cycleNumber: cycle,
          leader: fence.holder,
          durationMs: Math.round(timer.totalMs()),
        };
        let checkMs = 0;
        const { outbox } = await timer.time('commit', () =>
          overlap
            ? commitStore(input, () => {
                // The guard while Postgres writes: its time is the `check` phase, not the commit's.
                phase = 'check';
                const start = performance.now();
                try {
                  guard();
                } finally {
                  checkMs = performance.now() - start;
                }
                phase = 'commit'; // a violation fails the cycle in `check`
              })
            : this.store.commitCycle(input),
        );
        if (overlap) {
          timer.record('check', checkMs);
          timer.record('commit', -checkMs);
        }
        log.debug(
          { phase: '4-commit', ms: timer.ms('commit'), outbox: outbox.length },
          'decisions committed',
        );
        return { cycle, startedAt, result, outbox, snapshot, committed: true };
      });
      const full: CycleReport = { ...report, phasesMs: timer.all(), totalMs: timer.totalMs() };
      const level = full.committed ? 'info' : 'debug';
      this.logger[level](
        {
          cycle: full.cycle,
          trigger,
          phasesMs: full.phasesMs,
          totalMs: full.totalMs,
          ...full.result.stats,
          pending: full.result.pending.length,
        },
        full.committed ? 'cycle committed' : 'idle cycle',
      );
      this.tell(full);
      return full;
    } catch (error) {
      if (!(error instanceof NotLeaderError)) {
        this.logger.error(
          { cycle: cycleNumber, trigger, phase, err: error },
          'cycle failed; nothing of it was committed',
        );
      }
      for (const observer of this.observers) observer.onCycleFailed?.(phase, error);
      throw error;
    }
  }

  /**
   * Tells every observer of a cycle that ended well. An observer that throws is logged and the others are
   * still told: the cycle is committed by now, and must not be reported (or retried) as failed.
   */
  private tell(report: CycleReport): void {
    for (const observer of this.observers) {
      try {
        observer.onCycle(report);
      } catch (error) {
        this.logger.error({ cycle: report.cycle, committed: report.committed, err: error }, 'a cycle observer failed; the cycle itself ended as reported');
      }
    }
  }
}

/**
 * From this many decisions (admissions, preemptions, moves, budget stops) the guard runs while Postgres writes
 * (CycleStore.commitCycleChecked): one round trip more for the COMMIT, against the guard's time taken
 * off the cycle — ~0.3 s of a 10,000-admission cycle (bench:db:drain), ~60 ms at this size.
 */
export const OVERLAPPED_CHECK_MIN_DECISIONS = 2_000;

function decisions(result: BudgetedCycleResult): number {
  return result.admissions.length + result.preemptions.length + (result.moves?.length ?? 0) + (result.budgetStops?.length ?? 0);
}

function isEmpty(result: BudgetedCycleResult): boolean {
  return (
    result.admissions.length === 0 &&
    result.preemptions.length === 0 &&
    (result.moves?.length ?? 0) === 0 &&
    (result.budgetStops?.length ?? 0) === 0 &&
    result.reservations.length === 0 &&
    result.pending.length === 0
  );
}
