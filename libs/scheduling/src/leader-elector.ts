import type { Logger } from 'pino';

/** What the lease table answers (libs/db `acquireOrRenewLease`). */
export interface LeaseState {
  /** True when `holder` holds the lease after the call. */
  held: boolean;
  holder: string;
  fencingToken: bigint;
  expiresAt: Date;
}

export interface LeaseStore {
  acquireOrRenew(name: string, holder: string, ttlMs: number): Promise<LeaseState>;
  /** Gives the lease up (graceful shutdown), so a standby takes over at once. */
  release(name: string, holder: string): Promise<void>;
}

export interface LeaderElectorOptions {
  leaseName: string;
  /** Unique per process, e.g. `${hostname}:${pid}:${random}`. */
  holder: string;
  ttlMs: number;
  /** How often to renew (well under ttlMs). */
  renewEveryMs: number;
}

export interface Leadership {
  leaseName: string;
  holder: string;
  fencingToken: bigint;
}

/**
 * Active/standby election over the SchedulerLease row. The leader renews every `renewEveryMs`; a standby
 * tries as often, and gets the lease (with a larger fencing token) once the old one expires.
 *
 * Self-fencing: the leader considers itself deposed as soon as it could not renew for `ttlMs` minus one
 * renew period — before any standby can take the lease — and every commit is checked against the
 * fencing token in the database anyway.
 */
export class LeaderElector {
  private leadership: Leadership | null = null;
  private lastRenewedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  /** Set by stop(): a renewal that was in flight must not make us leader again. */
  private shutDown = false;
  private renewing: Promise<void> | null = null;
  /** The store's last answer said we hold the lease (even one that came in after stop() began). */
  private heldInStore = false;
  private settleFirstRound: ((leader: boolean) => void) | null = null;
  /** Resolves after the first election round (or a stop before it): whether it made this process the leader. */
  readonly firstRound = new Promise<boolean>((resolve) => {
    this.settleFirstRound = resolve;
  });

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeaderElectorOptions,
    private readonly logger: Logger,
    private readonly events: { onElected(l: Leadership): void; onDeposed(reason: string): void },
    private readonly clock: () => number = Date.now,
  ) {
    if (options.renewEveryMs * 2 > options.ttlMs) throw new RangeError('renewEveryMs must be at most half of ttlMs');
  }

  get current(): Leadership | null {
    if (this.leadership && this.clock() - this.lastRenewedAt > this.options.ttlMs - this.options.renewEveryMs) {
      this.depose('lease not renewed in time');
    }
    return this.leadership;
  }

  get isLeader(): boolean {
    return this.current !== null;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.shutDown = false;
    const loop = (): void => {
      if (this.stopped) return;
      this.renewing = this.tick().finally(() => {
        this.renewing = null;
        if (!this.stopped) this.timer = setTimeout(loop, this.options.renewEveryMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.shutDown = true;
    if (this.timer) clearTimeout(this.timer);
    await this.renewing;
    this.settleFirstRound?.(false);
    this.settleFirstRound = null;
    // An acquisition in flight when stop() began may have taken the lease without making us leader: give
    // it back too, or a standby waits out the TTL.
    const held = this.leadership !== null || this.heldInStore;
    this.depose('shutting down');
    if (held) {
      this.heldInStore = false;
      await this.store.release(this.options.leaseName, this.options.holder).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'could not release the lease');
      });
    }
  }

  /**
   * The database refused a commit of ours (its fencing token is not ours any more): the lease moved on
   * while we still believed we held it (a renewal answered late, a paused process). Step down now rather
   * than at the next renewal; the renewals go on, so this process competes again (and leads again, with a
   * new token, once the lease is free).
   */
  stepDown(reason: string): void {
    this.depose(reason);
  }

  /** One election round (exposed for tests). */
  async tick(): Promise<void> {
    const { leaseName, holder, ttlMs } = this.options;
    try {
      const state = await this.store.acquireOrRenew(leaseName, holder, ttlMs);
      this.heldInStore = state.held;
      if (this.shutDown) return;
      if (state.held) {
        this.lastRenewedAt = this.clock();
        if (!this.leadership || this.leadership.fencingToken !== state.fencingToken) {
          const was = this.leadership;
          this.leadership = { leaseName, holder, fencingToken: state.fencingToken };
          if (was) this.events.onDeposed('fencing token changed');
          this.logger.info({ lease: leaseName, fencingToken: state.fencingToken.toString() }, 'became leader');
          this.events.onElected(this.leadership);
        }
      } else if (this.leadership) {
        this.depose(`lease taken by ${state.holder}`);
      }
    } catch (error) {
      this.logger.warn({ err: error, lease: leaseName }, 'lease renewal failed');
      void this.current; // self-fence if renewals have failed for too long
    } finally {
      this.settleFirstRound?.(this.leadership !== null);
      this.settleFirstRound = null;
    }
  }

  private depose(reason: string): void {
    if (!this.leadership) return;
    const level = this.shutDown ? 'info' : 'warn'; // giving the lease up on shutdown is not a problem
    this.logger[level]({ lease: this.options.leaseName, reason }, this.shutDown ? 'gave up leadership' : 'lost leadership');
    this.leadership = null;
    this.events.onDeposed(reason);
  }
}
