import { acquireOrRenewLease, readLease, releaseLease, type Database } from '#db';
import type { LeaseState, LeaseStore } from '../leader-elector.js';
import type { CommitFencing, FencingSource } from '../cycle-store.js';

/** The SchedulerLease row through libs/db (one upsert per renewal, timed by the database clock). */
export class PgLeaseStore implements LeaseStore {
  constructor(private readonly db: Pick<Database, 'pool'>) {}

  acquireOrRenew(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    return acquireOrRenewLease(this.db, name, holder, ttlMs);
  }

  release(name: string, holder: string): Promise<void> {
    return releaseLease(this.db, name, holder);
  }
}

/**
 * Fencing for a cycle started outside the leader (POST /v1/scheduler/cycles in an API process). It is
 * asked while the cycle lock is held, so it never overlaps a leader's cycle:
 * - a live leader: commit under the leader's token (the fencing check still rejects the commit if the
 *   lease changes hands before it);
 * - no live leader (no scheduler process, e.g. tests stepping cycles): take the lease for this process
 *   for `ttlMs` — a scheduler that starts later takes it over with a larger token.
 */
export class ManualCycleFencing implements FencingSource {
  /** Set when this process took the lease itself (no live leader): released after the cycle. */
  private took = false;

  constructor(
    private readonly db: Pick<Database, 'pool'>,
    private readonly leaseName: string,
    private readonly holder: string,
    private readonly ttlMs: number,
  ) {}

  async current(): Promise<(CommitFencing & { holder: string }) | null> {
    const lease = await readLease(this.db, this.leaseName);
    if (lease?.held) return { leaseName: this.leaseName, token: lease.fencingToken, holder: lease.holder };
    const taken = await acquireOrRenewLease(this.db, this.leaseName, this.holder, this.ttlMs);
    this.took = taken.held;
    return taken.held ? { leaseName: this.leaseName, token: taken.fencingToken, holder: this.holder } : null;
  }

  /** Gives back a lease taken for a manual cycle, so a scheduler process gets it at once. */
  async releaseIfTaken(): Promise<void> {
    if (!this.took) return;
    this.took = false;
    await releaseLease(this.db, this.leaseName, this.holder);
  }
}
