/** Times the numbered phases of a cycle. `clock` returns milliseconds (performance.now in production). */
export class PhaseTimer<P extends string> {
  private readonly durations = new Map<P, number>();
  private readonly started: number;

  constructor(private readonly clock: () => number) {
    this.started = clock();
  }

  /** Runs `step`, records its duration under `phase`, and returns its result. */
  async time<T>(phase: P, step: () => Promise<T> | T): Promise<T> {
    const start = this.clock();
    try {
      return await step();
    } finally {
      this.durations.set(phase, (this.durations.get(phase) ?? 0) + (this.clock() - start));
    }
  }

  /** Records a duration measured elsewhere (e.g. time spent waiting for a lock). */
  record(phase: P, ms: number): void {
    this.durations.set(phase, (this.durations.get(phase) ?? 0) + ms);
  }

  ms(phase: P): number {
    return round(this.durations.get(phase) ?? 0);
  }

  totalMs(): number {
    return round(this.clock() - this.started);
  }

  all(): Record<P, number> {
    const out = {} as Record<P, number>;
    for (const [phase, ms] of this.durations) out[phase] = round(ms);
    return out;
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
