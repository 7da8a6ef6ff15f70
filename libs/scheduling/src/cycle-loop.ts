/**
 * Decides *when* cycles run: on events (debounced) and on a periodic tick; never two at once.
 *
 * - `trigger(reason)` schedules a cycle `debounceMs` later; further triggers inside that window join it.
 * - A trigger that arrives while a cycle runs schedules exactly one more cycle after it.
 * - `tickMs` runs a cycle periodically even without events (gang timeouts, missed events).
 * - Errors of a cycle are reported to `onError` and never stop the loop.
 */
export interface CycleLoopOptions {
  debounceMs: number;
  tickMs: number;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class CycleLoop {
  private running: Promise<void> | null = null;
  private pendingReasons: string[] = [];
  private debounceHandle: unknown = null;
  private tickHandle: unknown = null;
  private rerun = false;
  private active = false;

  constructor(
    private readonly runCycle: (reasons: string[]) => Promise<void>,
    private readonly options: CycleLoopOptions,
    private readonly onError: (error: unknown) => void,
    private readonly timers: Timers = realTimers,
  ) {
    if (options.debounceMs < 0 || options.tickMs <= 0) throw new RangeError('debounceMs must be ≥ 0 and tickMs > 0');
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.scheduleTick();
    this.trigger('start');
  }

  /** Stops scheduling new cycles and waits for the one in flight. */
  async stop(): Promise<void> {
    this.active = false;
    if (this.debounceHandle !== null) this.timers.clearTimeout(this.debounceHandle);
    if (this.tickHandle !== null) this.timers.clearTimeout(this.tickHandle);
    this.debounceHandle = null;
    this.tickHandle = null;
    await this.running;
  }

  get isActive(): boolean {
    return this.active;
  }

  trigger(reason: string): void {
    if (!this.active) return;
    if (!this.pendingReasons.includes(reason)) this.pendingReasons.push(reason);
    if (this.running) {
      this.rerun = true;
      return;
    }
    if (this.debounceHandle !== null) return;
    this.debounceHandle = this.timers.setTimeout(() => {
      this.debounceHandle = null;
      this.fire();
    }, this.options.debounceMs);
  }

  private fire(): void {
    if (!this.active || this.running) return;
    const reasons = this.pendingReasons;
    this.pendingReasons = [];
    this.rerun = false;
    this.running = this.runCycle(reasons)
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.running = null;
        if (this.rerun && this.active) {
          this.rerun = false;
          this.trigger('rerun');
        }
      });
  }

  private scheduleTick(): void {
    this.tickHandle = this.timers.setTimeout(() => {
      if (!this.active) return;
      this.trigger('tick');
      this.scheduleTick();
    }, this.options.tickMs);
  }
}
