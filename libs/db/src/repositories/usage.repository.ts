import type { UsageInputs } from '#core';
import type { DbHandle } from './db-handle.js';
import { QUOTA_SELECT } from './tenancy.records.js';

const HOLDING = ['ADMITTED', 'BINDING', 'RUNNING'] as const;

/**
 * What `teamUsage` (libs/core) needs, read through the Prisma client in one REPEATABLE READ transaction
 * (one snapshot of the database: a job admitted or a quota changed meanwhile is seen by all the reads or
 * by none): teams, quotas, the accelerators held per team and flavor, and the pending demand. Pending
 * jobs are grouped by team, flavor list and accelerators per replica in Postgres, so the read stays
 * small with tens of thousands of pending jobs.
 */
export class UsageRepository {
  constructor(private readonly db: DbHandle) {}

  async load(): Promise<UsageInputs> {
    const prisma = this.db.prisma;
    const [teams, quotas, holding, pending] = await prisma.$transaction(
      [
        prisma.team.findMany({ select: { name: true, cohort: true } }),
        prisma.quota.findMany({ select: QUOTA_SELECT }),
        prisma.job.findMany({
          where: { state: { in: [...HOLDING] } },
          select: { team: true, allocations: { select: { flavor: true, accelerators: true, cpuMillis: true, memoryMiB: true } } },
        }),
        prisma.job.groupBy({ by: ['team', 'flavors', 'acceleratorsPerReplica'], where: { state: 'PENDING' }, _sum: { replicas: true }, orderBy: [{ team: 'asc' }] }),
      ],
      { isolationLevel: 'RepeatableRead' },
    );
    return {
      teams,
      quotas,
      held: holding.flatMap((job) =>
        job.allocations.map((a) => ({ team: job.team, flavor: a.flavor, accelerators: a.accelerators, cpuMillis: a.cpuMillis, memoryMiB: a.memoryMiB })),
      ),
      demand: pending.map((g) => ({ team: g.team, flavors: g.flavors, accelerators: (g._sum.replicas ?? 0) * g.acceleratorsPerReplica })),
    };
  }
}
