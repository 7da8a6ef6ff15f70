import type { Logger } from 'pino';
import type { FailpointHook } from './failpoints.js';
import { CycleLoop } from './cycle-loop.js';
import { NotLeaderError, type CycleReport, type CycleRunner } from './cycle-runner.js';
import type { CycleTriggerSubscriber } from './cycle-trigger.js';
import type { LeaderElector } from './leader-elector.js';
import type { OutboxRelay } from './outbox-relay.js';
import type { OutboxRef } from './outbox-store.js';
import type { Reconciler } from './reconciler.js';
import type { SchedulerMetrics } from './scheduler-metrics.js';

/** Triggers whose API change may have written outbox entries of its own (cancel, status report). */
const API_OUTBOX_REASONS = new Set(['job.cancelled', 'job.finished', 'job.status']);

export interface SchedulerStatus {
  leader: boolean;
  holder: string;
  fencingToken: string | null;
  lastCycle: { number: number; at: string; ageMs: number; durationMs: number } | null;
  lastCycleError: string | null;
}

/**
 * The scheduler process: elects a leader; the leader runs the cycle loop (events + tick) and reconcile
 * (on election and periodically); a standby only keeps trying the lease.
 */
export class SchedulerService {
  private readonly loop: CycleLoop;
  private settleFirstCycle: (() => void) | null = null;
  private readonly firstCycle = new Promise<void>((resolve) => {
    this.settleFirstCycle = resolve;
  });
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> | null = null;
  private lastCycle: CycleReport | null = null;
  private lastCycleError: string | null = null;
  /** Side effects of committed cycles not yet handed to the queue, and the enqueue in flight. */
  private offers: { allDue: boolean; refs: OutboxRef[] } = { allDue: false, refs: [] };
  private enqueueing: Promise<void> | null = null;

  constructor(
    private readonly elector: LeaderElector,
    private readonly runner: CycleRunner,
    private readonly relay: OutboxRelay,
    private readonly reconciler: Reconciler,
    private readonly subscriber: CycleTriggerSubscriber | null,
    private readonly options: { holder: string; cycleDebounceMs: number; cycleTickMs: number; reconcileEveryMs: number },
    private readonly logger: Logger,
    private readonly metrics?: SchedulerMetrics,
    private readonly clock: () => number = Date.now,
    private readonly failpoint?: FailpointHook,
  ) {
    this.loop = new CycleLoop(
      (reasons) => this.cycle(reasons),
      { debounceMs: options.cycleDebounceMs, tickMs: options.cycleTickMs },
      (error) => this.logger.error({ err: error }, 'cycle loop error'),
    );
  }

  /** Called by the elector. */
  onElected(): void {
    this.metrics?.setLeader(true);
    this.loop.start();
    this.scheduleReconcile(0);
  }

  /** Called by the elector. */
  onDeposed(): void {
    this.metrics?.setLeader(false);
    void this.loop.stop();
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.reconcileTimer = null;
  }

  async start(): Promise<void> {
    await this.subscriber?.start();
    this.metrics?.setLeader(false);
    this.elector.start();
  }

  async stop(): Promise<void> {
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.reconcileTimer = null;
    await this.loop.stop();
    await this.enqueueing;
    await this.reconciling;
    await this.elector.stop();
    await this.subscriber?.close();
  }

  /** An event (from the API via Redis, or in-process) asks for a cycle soon. */
  trigger(reason: string): void {
    this.loop.trigger(reason);
  }

  status(): SchedulerStatus {
    const leadership = this.elector.current;
    const last = this.lastCycle;
    return {
      leader: leadership !== null,
      holder: this.options.holder,
      fencingToken: leadership ? leadership.fencingToken.toString() : null,
      lastCycle: last
        ? { number: last.cycle, at: new Date(last.startedAt).toISOString(), ageMs: this.clock() - last.startedAt, durationMs: last.totalMs }
        : null,
      lastCycleError: this.lastCycleError,
    };
  }

  /**
   * Resolves once this process's first cycle has ended (committed, idle or failed: `cycle`), or its first
   * election round left it a standby (`standby`), or after `maxWaitMs` (`timeout`; at once for 0).
   */
  async firstCycleSettled(maxWaitMs: number): Promise<'cycle' | 'standby' | 'timeout'> {
    if (maxWaitMs <= 0) return 'timeout';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), maxWaitMs);
      timer.unref();
    });
    const standby = this.elector.firstRound.then((leader) => (leader ? new Promise<never>(() => undefined) : ('standby' as const)));
    try {
      return await Promise.race([this.firstCycle.then(() => 'cycle' as const), standby, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async cycle(reasons: string[]): Promise<void> {
    if (!this.elector.isLeader) return;
    try {
      const report = await this.runner.runOnce(reasons).finally(() => {
        this.settleFirstCycle?.();
        this.settleFirstCycle = null;
      });
      this.lastCycle = report;
      this.lastCycleError = null;
      if (report.committed) this.failpoint?.('after-commit');
      this.offer(report, reasons);
    } catch (error) {
      if (error instanceof NotLeaderError) return;
      this.lastCycleError = (error as Error).message;
      if ((error as { code?: unknown }).code === 'FENCING_TOKEN_STALE') {
        // Nothing of the cycle was written: the lease has another holder. Stop leading at once.
        this.logger.warn({ err: error }, 'commit refused by the fencing check: the lease moved on; stepping down');
        this.elector.stepDown('commit refused by the fencing check');
        return;
      }
      throw error;
    }
  }

  /**
   * Hands the cycle's side effects to the queue without waiting for Redis: the next cycle must not
   * depend on it (admissions are committed to Postgres, the outbox holds the effects). Offers made while
   * an enqueue is in flight go together right after it. A failed enqueue (Redis down: the queue's calls
   * time out) is left to reconcile, which re-offers every pending entry, so a Redis outage delays effects
   * but loses none.
   */
  private offer(report: CycleReport, reasons: string[]): void {
    // Entries written by the API (cancel → delete) ride along when an API event triggered this cycle.
    if (reasons.some((reason) => API_OUTBOX_REASONS.has(reason))) this.offers.allDue = true;
    else this.offers.refs.push(...report.outbox);
    this.startDrain(report.cycle);
  }

  /**
   * One drain at a time; `enqueueing` is cleared only once a drain has settled, and offers made while it
   * settled start the next. (A drain with nothing to do settles at once: had it cleared `enqueueing`
   * itself, the assignment of its promise would have come after and kept it set for ever, and every
   * later cycle's side effects would have waited for reconcile.)
   */
  private startDrain(cycle: number): void {
    if (this.enqueueing !== null || !this.hasOffers()) return;
    this.enqueueing = this.drainOffers(cycle).finally(() => {
      this.enqueueing = null;
      this.startDrain(cycle);
    });
  }

  private hasOffers(): boolean {
    return this.offers.allDue || this.offers.refs.length > 0;
  }

  private async drainOffers(cycle: number): Promise<void> {
    while (this.hasOffers()) {
      const { allDue, refs } = this.offers;
      this.offers = { allDue: false, refs: [] };
      try {
        if (allDue) await this.relay.enqueueAllDue(new Date(this.clock()));
        else await this.relay.enqueueCommitted(refs);
      } catch (error) {
        this.logger.warn({ cycle, err: error }, 'could not enqueue side effects; reconcile will');
      }
    }
  }

  private scheduleReconcile(delayMs: number): void {
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.reconcileTimer = setTimeout(() => {
      this.reconciling = this.reconcileOnce().finally(() => {
        this.reconciling = null;
        if (this.elector.isLeader && this.reconcileTimer !== null) this.scheduleReconcile(this.options.reconcileEveryMs);
      });
    }, delayMs);
  }

  private async reconcileOnce(): Promise<void> {
    const leadership = this.elector.current;
    if (!leadership) return;
    try {
      const report = await this.reconciler.run({ leaseName: leadership.leaseName, token: leadership.fencingToken });
      if (report.requeued.length > 0 || report.allocationsReleased > 0) this.trigger('reconcile');
    } catch (error) {
      this.logger.warn({ err: error }, 'reconcile failed; retrying on the next period');
    }
  }
}
