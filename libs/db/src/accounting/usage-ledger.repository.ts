import type { DbHandle } from '../repositories/db-handle.js';
import { readUsage, readUsageTotals, type UsageRow, type UsageWindow } from './usage-ledger.js';

export interface UsageSegmentRecord {
  id: string;
  jobId: string;
  team: string;
  flavor: string;
  accelerators: number;
  startedAt: Date;
  endedAt: Date | null;
  endState: string | null;
  wasted: boolean;
}

export interface FlavorPriceRecord {
  flavor: string;
  costPerHour: number;
  effectiveFrom: Date;
}

/** Reads of the usage ledger and price history (both written by triggers: see the migration usage_ledger_triggers). */
export class UsageLedgerRepository {
  constructor(private readonly db: DbHandle) {}

  usage(window: UsageWindow): Promise<UsageRow[]> {
    return readUsage(this.db.pool, window);
  }

  totals(now: Date): Promise<{ team: string; flavor: string; acceleratorSeconds: number }[]> {
    return readUsageTotals(this.db.pool, now);
  }

  /** The ledger rows of some jobs (or all), in order. */
  async segments(jobIds?: readonly string[]): Promise<UsageSegmentRecord[]> {
    const { rows } = await this.db.pool.query<{
      id: string;
      job_id: string;
      team: string;
      flavor: string;
      accelerators: number;
      started_at: Date;
      ended_at: Date | null;
      end_state: string | null;
      wasted: boolean;
    }>(
      `SELECT id::text AS id, job_id, team, flavor, accelerators, started_at, ended_at, end_state::text AS end_state, wasted
       FROM usage_segments WHERE ($1::uuid[] IS NULL OR job_id = ANY($1::uuid[])) ORDER BY id`,
      [jobIds === undefined ? null : [...jobIds]],
    );
    return rows.map((r) => ({
      id: r.id,
      jobId: r.job_id,
      team: r.team,
      flavor: r.flavor,
      accelerators: r.accelerators,
      startedAt: r.started_at,
      endedAt: r.ended_at,
      endState: r.end_state,
      wasted: r.wasted,
    }));
  }

  /** Price history of a flavor, oldest first (also of a deleted flavor). */
  async prices(flavor: string): Promise<FlavorPriceRecord[]> {
    const { rows } = await this.db.pool.query<{ flavor: string; cost_per_hour: number; effective_from: Date }>(
      'SELECT flavor, cost_per_hour, effective_from FROM flavor_prices WHERE flavor = $1 ORDER BY effective_from, id',
      [flavor],
    );
    return rows.map((r) => ({ flavor: r.flavor, costPerHour: r.cost_per_hour, effectiveFrom: r.effective_from }));
  }

  /**
   * Re-derives the whole ledger from job_transitions (and the admissions' events), in one transaction;
   * returns the number of rows. The trigger keeps it current; this is for repair, and for tests that
   * compare the two.
   */
  async rebuild(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: number }>('SELECT qm_rebuild_usage_segments() AS n');
    return rows[0]!.n;
  }
}
