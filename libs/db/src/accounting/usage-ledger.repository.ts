import type { Prisma } from '../generated/prisma/client.js';
import type { DbHandle } from '../repositories/db-handle.js';
import { readUsage, readUsageTotals, type UsageRow, type UsageWindow } from './usage-ledger.js';

export const USAGE_SEGMENT_SELECT = {
  id: true,
  jobId: true,
  team: true,
  flavor: true,
  accelerators: true,
  startedAt: true,
  endedAt: true,
  endState: true,
  wasted: true,
  wastedSince: true,
} as const satisfies Prisma.UsageSegmentSelect;

/** A row of the ledger (Prisma's), its bigint id as decimal text. */
export type UsageSegmentRecord = Omit<Prisma.UsageSegmentGetPayload<{ select: typeof USAGE_SEGMENT_SELECT }>, 'id'> & { id: string };

export const FLAVOR_PRICE_SELECT = { flavor: true, costPerHour: true, effectiveFrom: true } as const satisfies Prisma.FlavorPriceSelect;
export type FlavorPriceRecord = Prisma.FlavorPriceGetPayload<{ select: typeof FLAVOR_PRICE_SELECT }>;

/**
 * Reads of the usage ledger and price history (both written by triggers: see the migration
 * usage_ledger_triggers): rows through the Prisma client, the usage aggregations (clipping to windows,
 * days or months and price periods) in raw SQL.
 */
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
    const rows = await this.db.prisma.usageSegment.findMany({
      where: jobIds === undefined ? {} : { jobId: { in: [...jobIds] } },
      select: USAGE_SEGMENT_SELECT,
      orderBy: { id: 'asc' },
    });
    return rows.map((r) => ({ ...r, id: r.id.toString() }));
  }

  /** Price history of a flavor, oldest first (also of a deleted flavor). */
  prices(flavor: string): Promise<FlavorPriceRecord[]> {
    return this.db.prisma.flavorPrice.findMany({ where: { flavor }, select: FLAVOR_PRICE_SELECT, orderBy: [{ effectiveFrom: 'asc' }, { id: 'asc' }] });
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
