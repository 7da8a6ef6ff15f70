import type { DbHandle } from './db-handle.js';
import { flavorKindFromDb, flavorKindToDb } from '../enums.js';
import type { Prisma } from '../generated/prisma/client.js';
import { isForeignKeyViolation, isRecordMissing, TX_OPTIONS } from './prisma-helpers.js';
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

/** Flavors (Prisma client). */
export class FlavorRepository {
  constructor(private readonly db: DbHandle) {}

  /** Creates the flavor, or replaces it when it exists (`created` tells which). */
  async upsert(name: string, f: FlavorInput): Promise<Upserted<FlavorRecord>> {
    const data = {
      kind: flavorKindToDb(f.kind),
      resourceName: f.resourceName,
      nodeLabels: f.nodeLabels,
      topologyLabels: f.topologyLabels ?? {},
      memoryGiB: f.memoryGiB,
      relativeSpeed: f.relativeSpeed,
      costPerHour: f.costPerHour,
    };
    for (;;) {
      // INSERT … ON CONFLICT DO NOTHING RETURNING: a row back means it was created.
      const [created] = await this.db.prisma.flavor.createManyAndReturn({ data: [{ name, ...data }], skipDuplicates: true, select: FLAVOR_SELECT });
      if (created) return { record: toRecord(created), created: true };
      try {
        return { record: toRecord(await this.db.prisma.flavor.update({ where: { name }, data, select: FLAVOR_SELECT })), created: false };
      } catch (error) {
        if (!isRecordMissing(error)) throw error; // deleted in between: create it
      }
    }
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
  async deleteIfUnused(name: string): Promise<'deleted' | 'in-use' | 'missing'> {
    try {
      const deleted = await this.db.prisma.$transaction(async (tx) => {
        if ((await tx.job.count({ where: this.activeJobsOf(name) })) > 0) return 0;
        return (await tx.flavor.deleteMany({ where: { name, nodes: { none: {} }, quotas: { none: {} } } })).count;
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
