import type { DbHandle } from './db-handle.js';
import { isForeignKeyViolation, lockTenancyRow, TX_OPTIONS, writeTenancyEvent } from './prisma-helpers.js';
import { auditUpsert, type Audited } from './tenancy-audit.js';
import { MissingReferenceError, NODE_SELECT, toNodeRecord, type Deletion, type NodeRecord, type Upserted } from './tenancy.records.js';

/** What keeps a node from being deleted: the jobs holding accelerators on it (id and name). */
export interface NodeUse {
  jobs: { id: string; name: string; team: string }[];
}

/**
 * A change to a node that would leave it holding more than it has (fewer accelerators, CPU or memory than
 * its jobs' allocations, or another flavor than theirs): refused, naming the jobs, rather than leaving the
 * node silently over-allocated.
 */
export class NodeOverAllocatedError extends Error {
  constructor(
    readonly node: string,
    readonly shortfalls: string[],
    readonly jobs: { id: string; name: string; team: string }[],
  ) {
    super(`node ${node} would hold more than it has: ${shortfalls.join('; ')}`);
    this.name = 'NodeOverAllocatedError';
  }
}

export interface NodeInput {
  flavor: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
  topology: NodeRecord['topology'];
  labels: Record<string, string>;
  schedulable: boolean;
}

/** What a node's audit events record: what it was given over REST. */
function audited(n: NodeRecord): Audited {
  const { flavor, accelerators, cpuMillis, memoryMiB, topology, labels, schedulable } = n;
  return { flavor, accelerators, cpuMillis, memoryMiB, topology, labels, schedulable };
}

/** Nodes (Prisma client). Kubernetes mode's sync writes them in bulk elsewhere (kubernetes/kube-nodes.ts). */
export class NodeRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * A node written through the API (source `api`), with its audit event (node.created, or node.updated with
   * the true before) in the same transaction; inserted first, as quotas are, so concurrent creations give
   * one creation. Throws MissingReferenceError('flavor') when the flavor does not exist.
   */
  async upsert(name: string, n: NodeInput, actor: string): Promise<Upserted<NodeRecord>> {
    const data = {
      flavor: n.flavor,
      accelerators: n.accelerators,
      cpuMillis: n.cpuMillis,
      memoryMiB: n.memoryMiB,
      zone: n.topology.zone ?? null,
      block: n.topology.block ?? null,
      domain: n.topology.domain ?? null,
      tpuShape: n.topology.tpuShape ?? null,
      schedulable: n.schedulable,
      labels: n.labels,
    };
    try {
      return await this.db.prisma.$transaction(async (tx) => {
        for (;;) {
          // INSERT … ON CONFLICT DO NOTHING RETURNING: a row back means it was created.
          const [created] = await tx.node.createManyAndReturn({ data: [{ name, ...data, source: 'api' }], skipDuplicates: true, select: NODE_SELECT });
          if (created) {
            const record = toNodeRecord(created);
            await auditUpsert(tx, 'node', name, actor, null, audited(record));
            return { record, created: true };
          }
          // Locked, so no admission commits onto the node between the check and the change.
          if (!(await lockTenancyRow(tx, 'nodes', name))) continue; // deleted in between: create it
          const before = toNodeRecord(await tx.node.findUniqueOrThrow({ where: { name }, select: NODE_SELECT }));
          const held = await tx.allocation.findMany({
            where: { node: name },
            select: { flavor: true, accelerators: true, cpuMillis: true, memoryMiB: true, job: { select: { id: true, name: true, team: true } } },
          });
          const sum = (f: (a: (typeof held)[number]) => number): number => held.reduce((t, a) => t + f(a), 0);
          const short: string[] = [];
          if (held.some((a) => a.flavor !== n.flavor)) short.push(`its jobs hold ${held[0]!.flavor} accelerators, not ${n.flavor}`);
          if (sum((a) => a.accelerators) > n.accelerators) short.push(`accelerators ${sum((a) => a.accelerators)} held > ${n.accelerators}`);
          if (sum((a) => a.cpuMillis) > n.cpuMillis) short.push(`cpuMillis ${sum((a) => a.cpuMillis)} held > ${n.cpuMillis}`);
          if (sum((a) => a.memoryMiB) > n.memoryMiB) short.push(`memoryMiB ${sum((a) => a.memoryMiB)} held > ${n.memoryMiB}`);
          if (short.length > 0) {
            const jobs = [...new Map(held.map((a) => [a.job.id, a.job])).values()].sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
            throw new NodeOverAllocatedError(name, short, jobs);
          }
          const record = toNodeRecord(await tx.node.update({ where: { name }, data, select: NODE_SELECT }));
          await auditUpsert(tx, 'node', name, actor, audited(before), audited(record));
          return { record, created: false };
        }
      }, TX_OPTIONS);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new MissingReferenceError('flavor', n.flavor);
      throw error;
    }
  }

  async list(): Promise<NodeRecord[]> {
    return (await this.db.prisma.node.findMany({ select: NODE_SELECT, orderBy: { name: 'asc' } })).map(toNodeRecord);
  }

  async get(name: string): Promise<NodeRecord | null> {
    const row = await this.db.prisma.node.findUnique({ where: { name }, select: NODE_SELECT });
    return row ? toNodeRecord(row) : null;
  }

  /**
   * Deletes a node no job holds accelerators on and writes a node.deleted event, in one transaction. An
   * admission placing a job on it meanwhile waits for the row lock and then fails on the foreign key (the
   * scheduler's cycle is retried), or committed first and is seen by the check.
   */
  async delete(name: string, actor: string): Promise<Deletion<NodeUse>> {
    return this.db.prisma.$transaction(async (tx): Promise<Deletion<NodeUse>> => {
      if (!(await lockTenancyRow(tx, 'nodes', name))) return { outcome: 'missing' };
      const holders = await tx.allocation.findMany({ where: { node: name }, distinct: ['jobId'], select: { job: { select: { id: true, name: true, team: true } } } });
      if (holders.length > 0) {
        const jobs = holders.map((h) => h.job).sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
        return { outcome: 'in-use', use: { jobs } };
      }
      const { flavor } = await tx.node.delete({ where: { name }, select: { flavor: true } });
      const eventId = await writeTenancyEvent(tx, 'node.deleted', null, actor, `node ${name} deleted by ${actor}`, { node: name, flavor });
      return { outcome: 'deleted', eventId };
    }, TX_OPTIONS);
  }
}
