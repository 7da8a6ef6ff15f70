import type { LeaseState, LeaseStore } from './leader-elector.js';

/**
 * Leadership that needs two leases: `gate` elects (e.g. a coordination.k8s.io Lease, which operators see
 * with `kubectl get lease`), `fence` fences (the Postgres lease, whose token every commit checks in its
 * own transaction). A candidate holds leadership only while it holds both, and the fencing token is the
 * fence's, so a Lease outside Postgres can never let a stale leader commit. A holder that loses the gate
 * gives the fence back at once, so the gate's new holder does not wait for the fence to expire.
 */
export class GatedLeaseStore implements LeaseStore {
  /** Whether this store's last call ended with the fence held (per holder). */
  private readonly fenced = new Set<string>();

  constructor(
    private readonly gate: LeaseStore,
    private readonly fence: LeaseStore,
    /** The gate's lease name for a given fence lease name. */
    private readonly gateName: (name: string) => string = (name) => name,
  ) {}

  async acquireOrRenew(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    const gate = await this.gate.acquireOrRenew(this.gateName(name), holder, ttlMs);
    if (!gate.held) {
      if (this.fenced.delete(holder)) await this.fence.release(name, holder);
      return { ...gate, fencingToken: 0n };
    }
    const fence = await this.fence.acquireOrRenew(name, holder, ttlMs);
    if (fence.held) this.fenced.add(holder);
    else this.fenced.delete(holder);
    return fence;
  }

  async release(name: string, holder: string): Promise<void> {
    this.fenced.delete(holder);
    try {
      await this.fence.release(name, holder);
    } finally {
      await this.gate.release(this.gateName(name), holder);
    }
  }
}
