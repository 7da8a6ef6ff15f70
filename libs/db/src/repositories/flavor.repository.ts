import type { DbHandle } from './db-handle.js';
import { flavorKindFromDb, flavorKindToDb } from '../enums.js';
import type { Prisma } from '../generated/prisma/client.js';
import { isForeignKeyViolation, lockTenancyRow, TX_OPTIONS } from './prisma-helpers.js';
import { auditDeletion, auditUpsert, type Audited } from './tenancy-audit.js';
import { FLAVOR_SELECT, type FlavorRecord, type Upserted } from './tenancy.records.js';

const toRecord = (r: Prisma.FlavorGetPayload<{ select: typeof FLAVOR_SELECT }>): FlavorRecord => ({
  ...r,
  kind: flavorKindFromDb(r.kind),
  nodeLabels: r.nodeLabels as FlavorRecord['nodeLabels'],
  topologyLabels: r.topologyLabels as FlavorRecord['topologyLabels'],
});

export type FlavorInput = Omit<FlavorRecord, 'name' | 'createdAt' | 'updatedAt' | 'topologyLabels'> & Partial<Pick<FlavorRecord, 'topologyLabels'>>;

/** What still refers to a flavor (a flavor in use cannot be deleted). */
export interface FlavorUse {
  nodes: number;
  quotas: number;
  activeJobs: number;
}

const FINISHED = ['SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

/** What a flavor's audit events record: its settings. */
function audited(f: FlavorRecord): Audited {
  const { kind, resourceName, nodeLabels, topologyLabels, memoryGiB, relativeSpeed, costPerHour } = f;
  return { kind, resourceName, nodeLabels, topologyLabels, memoryGiB, relativeSpeed, costPerHour };
}

/** Flavors (Prisma client). Every change writes an audit event (flavor.created/updated/deleted) in its own transaction. */
export class FlavorRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Creates the flavor, or replaces it when it exists (`created` tells which), with its audit event
   * (flavor.created, or flavor.updated with the true before) in the same transaction. Inserted first (ON
   * CONFLICT DO NOTHING): a lock taken while the row does not exist locks nothing, so concurrent creations
   * each saw "none"; a concurrent insert waits for the first to commit, then finds the row, which it locks
   * and reads as its before.
   */
  async upsert(name: string, f: FlavorInput, actor: string): Promise<Upserted<FlavorRecord>> {
    const data = {
      kind: flavorKindToDb(f.kind),
      resourceName: f.resourceName,
      nodeLabels: f.nodeLabels,
      topologyLabels: f.topologyLabels ?? {},
      memoryGiB: f.memoryGiB,
      relativeSpeed: f.relativeSpeed,
      costPerHour: f.costPerHour,
    };
    return this.db.prisma.$transaction(async (tx) => {
      for (;;) {
        // INSERT … ON CONFLICT DO NOTHING RETURNING: a row back means it was created.
        const [created] = await tx.flavor.createManyAndReturn({ data: [{ name, ...data }], skipDuplicates: true, select: FLAVOR_SELECT });
        if (created) {
          const record = toRecord(created);
          await auditUpsert(tx, 'flavor', name, actor, null, audited(record));
          return { record, created: true };
        }
        if (!(await lockTenancyRow(tx, 'flavors', name))) continue; // deleted in between: create it
        const before = toRecord(await tx.flavor.findUniqueOrThrow({ where: { name }, select: FLAVOR_SELECT }));
        const record = toRecord(await tx.flavor.update({ where: { name }, data, select: FLAVOR_SELECT }));
        await auditUpsert(tx, 'flavor', name, actor, audited(before), audited(record));
        return { record, created: false };
      }
    }, TX_OPTIONS);
  }

  async list(): Promise<FlavorRecord[]> {
    return (await this.db.prisma.flavor.findMany({ select: FLAVOR_SELECT, orderBy: { name: 'asc' } })).map(toRecord);
  }

  async get(name: string): Promise<FlavorRecord | null> {
    const row = await this.db.prisma.flavor.findUnique({ where: { name }, select: FLAVOR_SELECT });
    return row ? toRecord(row) : null;
  }

  /** Names among `names` that are not flavors. */
  async missing(names: readonly string[]): Promise<string[]> {
    const found = await this.db.prisma.flavor.findMany({ where: { name: { in: [...names] } }, select: { name: true } });
    const known = new Set(found.map((f) => f.name));
    return names.filter((n) => !known.has(n));
  }

  async use(name: string): Promise<FlavorUse> {
    const [nodes, quotas, activeJobs] = await this.db.prisma.$transaction([
      this.db.prisma.node.count({ where: { flavor: name } }),
      this.db.prisma.quota.count({ where: { flavor: name } }),
      this.db.prisma.job.count({ where: this.activeJobsOf(name) }),
    ]);
    return { nodes, quotas, activeJobs };
  }

  /**
   * Deletes the flavor only if no node, quota or unfinished job refers to it. Nodes and quotas are checked
   * by the DELETE itself (and their foreign keys); a write racing it that the foreign key refuses is in-use too.
   */
  async deleteIfUnused(name: string, actor: string): Promise<'deleted' | 'in-use' | 'missing'> {
    try {
      const deleted = await this.db.prisma.$transaction(async (tx) => {
        if ((await tx.job.count({ where: this.activeJobsOf(name) })) > 0) return 0;
        const before = await tx.flavor.findUnique({ where: { name }, select: FLAVOR_SELECT });
        const { count } = await tx.flavor.deleteMany({ where: { name, nodes: { none: {} }, quotas: { none: {} } } });
        if (count === 1 && before) await auditDeletion(tx, 'flavor', name, actor, audited(toRecord(before)));
        return count;
      }, TX_OPTIONS);
      if (deleted === 1) return 'deleted';
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
    }
    return (await this.get(name)) ? 'in-use' : 'missing';
  }

  private activeJobsOf(name: string): Prisma.JobWhereInput {
    return { state: { notIn: [...FINISHED] }, OR: [{ flavors: { has: name } }, { flavor: name }] };
  }
}
