import type { DbHandle } from './db-handle.js';
import type { Prisma } from '../generated/prisma/client.js';
import { lockTenancyRow, TX_OPTIONS, writeTenancyEvent } from './prisma-helpers.js';
import { auditUpsert } from './tenancy-audit.js';
import { COHORT_SELECT, type CohortRecord, type Deletion, type Upserted } from './tenancy.records.js';

/** What keeps a cohort from being deleted: its member teams. */
export interface CohortUse {
  members: string[];
}

const toRecord = ({ teams, ...c }: Prisma.CohortGetPayload<{ select: typeof COHORT_SELECT }>): CohortRecord => ({ ...c, members: teams.map((t) => t.name) });

/** Cohorts (Prisma client); members are the teams that name the cohort. */
export class CohortRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Creates or replaces a cohort with its audit event (cohort.created, or cohort.updated with the true
   * before) in one transaction; inserted first, as quotas are, so concurrent creations give one creation.
   */
  async upsert(name: string, description: string, actor: string): Promise<Upserted<CohortRecord>> {
    return this.db.prisma.$transaction(async (tx) => {
      for (;;) {
        const { count } = await tx.cohort.createMany({ data: [{ name, description }], skipDuplicates: true });
        if (count === 1) {
          await auditUpsert(tx, 'cohort', name, actor, null, { description });
          return { record: toRecord(await tx.cohort.findUniqueOrThrow({ where: { name }, select: COHORT_SELECT })), created: true };
        }
        if (!(await lockTenancyRow(tx, 'cohorts', name))) continue; // deleted in between: create it again
        const before = await tx.cohort.findUniqueOrThrow({ where: { name }, select: { description: true } });
        const record = toRecord(await tx.cohort.update({ where: { name }, data: { description }, select: COHORT_SELECT }));
        await auditUpsert(tx, 'cohort', name, actor, { description: before.description }, { description: record.description });
        return { record, created: false };
      }
    }, TX_OPTIONS);
  }

  async list(): Promise<CohortRecord[]> {
    return (await this.db.prisma.cohort.findMany({ select: COHORT_SELECT, orderBy: { name: 'asc' } })).map(toRecord);
  }

  async get(name: string): Promise<CohortRecord | null> {
    const row = await this.db.prisma.cohort.findUnique({ where: { name }, select: COHORT_SELECT });
    return row ? toRecord(row) : null;
  }

  async exists(name: string): Promise<boolean> {
    return (await this.db.prisma.cohort.count({ where: { name } })) === 1;
  }

  /**
   * Deletes a cohort without member teams and writes a cohort.deleted event, in one transaction. A team
   * joining it meanwhile waits for the row lock and then fails on the foreign key (or is seen by the check).
   */
  async delete(name: string, actor: string): Promise<Deletion<CohortUse>> {
    return this.db.prisma.$transaction(async (tx): Promise<Deletion<CohortUse>> => {
      if (!(await lockTenancyRow(tx, 'cohorts', name))) return { outcome: 'missing' };
      const members = await tx.team.findMany({ where: { cohort: name }, select: { name: true }, orderBy: { name: 'asc' } });
      if (members.length > 0) return { outcome: 'in-use', use: { members: members.map((m) => m.name) } };
      await tx.cohort.delete({ where: { name } });
      const eventId = await writeTenancyEvent(tx, 'cohort.deleted', null, actor, `cohort ${name} deleted by ${actor}`, { cohort: name });
      return { outcome: 'deleted', eventId };
    }, TX_OPTIONS);
  }
}
