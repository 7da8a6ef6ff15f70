import type { DbHandle } from './db-handle.js';
import { lockTenancyRow, TX_OPTIONS } from './prisma-helpers.js';
import { auditDeletion, auditUpsert } from './tenancy-audit.js';
import type { Deletion, Upserted } from './tenancy.records.js';

export interface PriorityClassRecord {
  name: string;
  value: number;
  description: string;
  isDefault: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface PriorityClassInput {
  value: number;
  description: string;
  isDefault: boolean;
}

/** What keeps a class from being deleted: the teams whose ceiling it is. */
export interface PriorityClassUse {
  teams: string[];
}

/** What submissions need to pick a priority: every class, and every team's ceiling (null: up to the default). */
export interface PriorityChoices {
  classes: PriorityClassRecord[];
  ceilings: Map<string, string | null>;
}

/** What a submission for one team needs: every class, and the team's ceiling (undefined: no such team). */
export interface PriorityChoice {
  classes: PriorityClassRecord[];
  ceiling: string | null | undefined;
}

const SELECT = { name: true, value: true, description: true, isDefault: true, createdAt: true, updatedAt: true } as const;
const audited = (c: Pick<PriorityClassRecord, 'value' | 'description' | 'isDefault'>): Record<string, unknown> => ({ value: c.value, description: c.description, default: c.isDefault });

/** Priority classes (Prisma client): named priorities defined by infra leads, at most one of them the default. */
export class PriorityClassRepository {
  constructor(private readonly db: DbHandle) {}

  async list(): Promise<PriorityClassRecord[]> {
    return this.db.prisma.priorityClass.findMany({ select: SELECT, orderBy: [{ value: 'desc' }, { name: 'asc' }] });
  }

  async get(name: string): Promise<PriorityClassRecord | null> {
    return this.db.prisma.priorityClass.findUnique({ where: { name }, select: SELECT });
  }

  /** Every class and every team's ceiling, read together (the API caches them: they change rarely, submissions are many). */
  async choices(): Promise<PriorityChoices> {
    const [classes, teams] = await this.db.prisma.$transaction([
      this.db.prisma.priorityClass.findMany({ select: SELECT, orderBy: [{ value: 'desc' }, { name: 'asc' }] }),
      this.db.prisma.team.findMany({ select: { name: true, maxPriorityClass: true } }),
    ]);
    return { classes, ceilings: new Map(teams.map((t) => [t.name, t.maxPriorityClass])) };
  }

  /**
   * Creates or replaces a class, with its audit event, in one transaction. A class made the default takes
   * that from the one that had it (whose audit event says so), so there is never more than one default.
   */
  async upsert(name: string, input: PriorityClassInput, actor: string): Promise<Upserted<PriorityClassRecord>> {
    return this.db.prisma.$transaction(async (tx) => {
      for (;;) {
        if (input.isDefault) {
          // Serialises defaults: two classes made the default at once would otherwise both keep it.
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('qm:priority-class-default'))`;
          const previous = await tx.priorityClass.findMany({ where: { isDefault: true, name: { not: name } }, select: SELECT });
          for (const p of previous) {
            await tx.priorityClass.update({ where: { name: p.name }, data: { isDefault: false } });
            await auditUpsert(tx, 'priorityClass', p.name, actor, audited(p), audited({ ...p, isDefault: false }));
          }
        }
        const { count } = await tx.priorityClass.createMany({ data: [{ name, ...input }], skipDuplicates: true });
        if (count === 1) {
          await auditUpsert(tx, 'priorityClass', name, actor, null, audited(input));
          return { record: await tx.priorityClass.findUniqueOrThrow({ where: { name }, select: SELECT }), created: true };
        }
        if (!(await lockTenancyRow(tx, 'priority_classes', name))) continue; // deleted in between: create it again
        const before = await tx.priorityClass.findUniqueOrThrow({ where: { name }, select: SELECT });
        const record = await tx.priorityClass.update({ where: { name }, data: input, select: SELECT });
        await auditUpsert(tx, 'priorityClass', name, actor, audited(before), audited(record));
        return { record, created: false };
      }
    }, TX_OPTIONS);
  }

  /** Deletes a class no team has as its ceiling (jobs keep the number they were given), with its audit event. */
  async delete(name: string, actor: string): Promise<Deletion<PriorityClassUse>> {
    return this.db.prisma.$transaction(async (tx): Promise<Deletion<PriorityClassUse>> => {
      if (!(await lockTenancyRow(tx, 'priority_classes', name))) return { outcome: 'missing' };
      const teams = await tx.team.findMany({ where: { maxPriorityClass: name }, select: { name: true }, orderBy: { name: 'asc' } });
      if (teams.length > 0) return { outcome: 'in-use', use: { teams: teams.map((t) => t.name) } };
      const before = await tx.priorityClass.findUniqueOrThrow({ where: { name }, select: SELECT });
      await tx.priorityClass.delete({ where: { name } });
      const eventId = await auditDeletion(tx, 'priorityClass', name, actor, audited(before));
      return { outcome: 'deleted', eventId };
    }, TX_OPTIONS);
  }
}
