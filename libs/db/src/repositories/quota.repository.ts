import type { DbHandle } from './db-handle.js';
import { isForeignKeyViolation, lockQuotaRow, TX_OPTIONS, writeTenancyEvent, type Tx } from './prisma-helpers.js';
import { MissingReferenceError, QUOTA_SELECT, type QuotaRecord } from './tenancy.records.js';

export interface QuotaChange {
  before: QuotaRecord | null;
  after: QuotaRecord | null;
  /** Id of the audit event written in the same transaction. */
  eventId: string;
}

const limit = (n: number | null): string => (n === null ? 'unlimited' : String(n));
const describe = (q: QuotaRecord | null): string =>
  q === null
    ? 'none'
    : `nominal ${q.nominal}, borrowing ${limit(q.borrowingLimit)}, lending ${limit(q.lendingLimit)}, CPU ${limit(q.cpuMillisLimit)}, memory ${limit(q.memoryMiBLimit)}`;

/** The quota locked (FOR UPDATE) and read, or null when there is none. */
async function lockedQuota(tx: Tx, team: string, flavor: string): Promise<QuotaRecord | null> {
  if (!(await lockQuotaRow(tx, team, flavor))) return null;
  return tx.quota.findUnique({ where: { team_flavor: { team, flavor } }, select: QUOTA_SELECT });
}

/**
 * Quotas (Prisma client). Every change writes an audit Event (kind quota.created / quota.updated /
 * quota.deleted) with who, when, before and after, in the same transaction as the change.
 */
export class QuotaRepository {
  constructor(private readonly db: DbHandle) {}

  /** Throws MissingReferenceError (field `team` or `flavor`) when the team or flavor does not exist. */
  async put(q: QuotaRecord, actor: string): Promise<QuotaChange> {
    try {
      return await this.db.prisma.$transaction(async (tx) => {
        // Insert first: a lock taken while the row does not exist locks nothing, so concurrent creations
        // each saw "none" and each wrote quota.created. A concurrent INSERT waits for the first to commit
        // and then finds the row, which it locks and reads as its true `before`.
        let before: QuotaRecord | null = null;
        let after: QuotaRecord | undefined;
        // Loops only when the row is deleted between the two statements.
        while (after === undefined) {
          [after] = await tx.quota.createManyAndReturn({ data: [q], skipDuplicates: true, select: QUOTA_SELECT });
          if (after !== undefined) break;
          before = await lockedQuota(tx, q.team, q.flavor);
          if (before === null) continue;
          after = await tx.quota.update({
            where: { team_flavor: { team: q.team, flavor: q.flavor } },
            data: { nominal: q.nominal, borrowingLimit: q.borrowingLimit, lendingLimit: q.lendingLimit, cpuMillisLimit: q.cpuMillisLimit, memoryMiBLimit: q.memoryMiBLimit },
            select: QUOTA_SELECT,
          });
        }
        const kind = before === null ? 'quota.created' : 'quota.updated';
        const message = `quota of team ${q.team} for ${q.flavor} set by ${actor}: ${describe(before)} → ${describe(after)}`;
        const eventId = await writeTenancyEvent(tx, kind, q.team, actor, message, { flavor: q.flavor, before, after });
        return { before, after, eventId };
      }, TX_OPTIONS);
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
      const teams = await this.db.prisma.team.count({ where: { name: q.team } });
      throw teams === 0 ? new MissingReferenceError('team', q.team) : new MissingReferenceError('flavor', q.flavor);
    }
  }

  /** Null when there was no such quota (nothing written). */
  async delete(team: string, flavor: string, actor: string): Promise<QuotaChange | null> {
    return this.db.prisma.$transaction(async (tx) => {
      const before = await lockedQuota(tx, team, flavor);
      if (before === null) return null;
      await tx.quota.delete({ where: { team_flavor: { team, flavor } } });
      const message = `quota of team ${team} for ${flavor} deleted by ${actor}: ${describe(before)} → none`;
      const eventId = await writeTenancyEvent(tx, 'quota.deleted', team, actor, message, { flavor, before, after: null });
      return { before, after: null, eventId };
    }, TX_OPTIONS);
  }
}
