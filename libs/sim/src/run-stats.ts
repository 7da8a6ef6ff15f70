/**
 * The figures a simulation accumulates as it goes (metrics.ts derives the rest from the outcomes):
 * the allocation step function, preemption instants, the core's cost per cycle, and how busy the fleet
 * was while jobs waited.
 */
export class RunStats {
  /** Allocated accelerators at each change: [virtual seconds, allocated]. */
  readonly allocation: { seconds: number; allocated: number }[] = [{ seconds: 0, allocated: 0 }];
  readonly preemptionTimes: number[] = [];
  cycles = 0;
  /** Wall ms inside the core. */
  coreMillis = 0;
  maxPending = 0;
  slowestCycleMillis = 0;
  slowestCyclePending = 0;
  /** Virtual ms with at least one job waiting, and the accelerators allocated meanwhile (× ms). */
  queuedMs = 0;
  queuedAllocatedMs = 0;

  /** Allocation at `nowMs` (one point per instant: a later change at the same instant replaces it). */
  recordAllocation(nowMs: number, allocated: number): void {
    const last = this.allocation[this.allocation.length - 1]!;
    const seconds = nowMs / 1000;
    if (last.seconds === seconds) last.allocated = allocated;
    else if (last.allocated !== allocated) this.allocation.push({ seconds, allocated });
  }

  /** The clock moves from `fromMs` to `toMs` with `pending` jobs waiting and `allocated` accelerators held. */
  elapse(fromMs: number, toMs: number, pending: number, allocated: number): void {
    if (pending > 0 && toMs > fromMs) {
      this.queuedMs += toMs - fromMs;
      this.queuedAllocatedMs += (toMs - fromMs) * allocated;
    }
  }

  /** A cycle of the core took `ms` wall milliseconds with `pending` jobs waiting. */
  cycleTook(ms: number, pending: number): void {
    this.coreMillis += ms;
    this.cycles += 1;
    if (ms > this.slowestCycleMillis) {
      this.slowestCycleMillis = ms;
      this.slowestCyclePending = pending;
    }
  }

  queueGrew(pending: number): void {
    if (pending > this.maxPending) this.maxPending = pending;
  }
}
