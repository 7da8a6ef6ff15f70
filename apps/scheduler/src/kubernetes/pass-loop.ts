import type { Logger } from 'pino';

/** A new candidate pod runs a pass this soon (ms): the pods of one controller's burst share it. */
export const NUDGE_DELAY_MS = 50;

/**
 * When a watcher's passes run (the importers', the workload status sync's): every `everyMs` (the safety net);
 * `NUDGE_DELAY_MS` after `nudge()` — for the importers, a new unbound pod that may be ours — instead of waiting up
 * to a whole interval (a JobSet's pods, or a Job's late ones, each waited for the next tick before they were
 * imported or bound); at once after `request()` — the status sync's watch event that may end a job. Passes never
 * overlap, and requests made while one is waiting to start are one pass; a request while a pass runs queues one
 * more.
 */
export class PassLoop {
  private timer: NodeJS.Timeout | null = null;
  private nudged: NodeJS.Timeout | null = null;
  private waiting = false;
  private stopped = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly logger: Logger,
    private readonly failure: string,
    private readonly nudgeDelayMs: number = NUDGE_DELAY_MS,
  ) {}

  /** Starts the interval (nothing when `everyMs` is 0: passes are off, and so are nudges). */
  start(): void {
    if (this.everyMs <= 0 || this.stopped) return;
    this.timer = setInterval(() => this.request(), this.everyMs);
    this.timer.unref();
  }

  /** A pass soon (coalesced with every other nudge of the next `nudgeDelayMs`). */
  nudge(): void {
    if (this.timer === null || this.nudged !== null) return;
    this.nudged = setTimeout(() => {
      this.nudged = null;
      this.request();
    }, this.nudgeDelayMs);
    this.nudged.unref();
  }

  /** Stops both timers and waits for the pass in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.nudged) clearTimeout(this.nudged);
    this.timer = null;
    this.nudged = null;
    await this.chain;
  }

  /** A pass at once (queued behind the one running), even with the interval off; nothing once stopped. */
  request(): void {
    if (this.waiting || this.stopped) return;
    this.waiting = true;
    this.chain = this.chain.then(() => {
      this.waiting = false;
      if (this.stopped) return undefined;
      return this.pass().then(
        () => undefined,
        (error: unknown) => this.logger.warn({ err: error }, this.failure),
      );
    });
  }
}
