import type { LeaseState, LeaseStore } from '../leader-elector.js';

/** The lease rules of the SchedulerLease row, in memory, on a manual clock (the real one is tested on Postgres). */
export class MemoryLeases implements LeaseStore {
  row: { holder: string; token: bigint; expiresAt: number } | null = null;
  failing = false;
  constructor(private readonly clock: () => number) {}
  acquireOrRenew(_name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    if (this.failing) return Promise.reject(new Error('database unreachable'));
    const now = this.clock();
    if (!this.row || this.row.expiresAt <= now) {
      this.row = { holder, token: (this.row?.token ?? 0n) + 1n, expiresAt: now + ttlMs };
    } else if (this.row.holder === holder) {
      this.row.expiresAt = now + ttlMs;
    }
    const r = this.row;
    return Promise.resolve({ held: r.holder === holder, holder: r.holder, fencingToken: r.token, expiresAt: new Date(r.expiresAt) });
  }
  release(_name: string, holder: string): Promise<void> {
    if (this.row?.holder === holder) this.row.expiresAt = 0;
    return Promise.resolve();
  }
}
