import type { JobSpec, PendingJob, RunningJob, Snapshot } from '#core';
import type { DbHandle } from './db-handle.js';

export type UsageInputs = Pick<Snapshot, 'teams' | 'quotas' | 'running' | 'pending' | 'cohorts'>;

const HOLDING = ['ADMITTED', 'BINDING', 'RUNNING'] as const;

/**
 * What `teamUsage` (libs/core) needs, read from live rows through the Prisma client: teams, quotas,
 * cohorts, every job holding an allocation (with its allocated accelerators per flavor), and the pending
 * demand. Pending jobs with the same team, flavor list and accelerators per replica are folded into one
 * entry of `Σ replicas × acceleratorsPerReplica` accelerators (replicas = that sum, 1 per replica), which
 * `teamUsage` counts identically, so the read stays small with tens of thousands of pending jobs.
 */
export class UsageRepository {
  constructor(private readonly db: DbHandle) {}

  async load(): Promise<UsageInputs> {
    const prisma = this.db.prisma;
    const [teams, quotas, cohorts, running, pending] = await Promise.all([
      prisma.team.findMany({ select: { name: true, cohort: true, fairShareWeight: true, withinTeam: true, reclaimWithinCohort: true } }),
      prisma.quota.findMany({ select: { team: true, flavor: true, nominal: true, borrowingLimit: true, lendingLimit: true } }),
      prisma.cohort.findMany({ select: { name: true } }),
      prisma.job.findMany({
        where: { state: { in: [...HOLDING] } },
        select: { id: true, team: true, allocations: { select: { flavor: true, accelerators: true } } },
      }),
      prisma.job.groupBy({ by: ['team', 'flavors', 'acceleratorsPerReplica'], where: { state: 'PENDING' }, _sum: { replicas: true } }),
    ]);
    const spec = (id: string, team: string, flavors: string[], replicas: number): JobSpec => ({
      id,
      name: id,
      team,
      kind: 'training',
      priority: 0,
      preemptible: true,
      replicas,
      minReplicas: replicas,
      acceleratorsPerReplica: 1,
      cpuMillisPerReplica: 0,
      memoryMiBPerReplica: 0,
      flavors,
      flavorSelection: 'preference',
      topology: { level: 'none' },
      expectedRuntimeSeconds: null,
      submittedAt: 0,
    });
    // One running entry per job and flavor it holds accelerators of.
    const held = running.flatMap((job) => {
      const perFlavor = new Map<string, number>();
      for (const a of job.allocations) perFlavor.set(a.flavor, (perFlavor.get(a.flavor) ?? 0) + a.accelerators);
      return [...perFlavor].map(([flavor, accelerators]) => ({ id: job.id, team: job.team, flavor, accelerators }));
    });
    // Pending demand per team and flavor list.
    const demand = new Map<string, { team: string; flavors: string[]; accelerators: number }>();
    for (const g of pending) {
      const key = JSON.stringify([g.team, g.flavors]);
      const entry = demand.get(key) ?? { team: g.team, flavors: g.flavors, accelerators: 0 };
      entry.accelerators += (g._sum.replicas ?? 0) * g.acceleratorsPerReplica;
      demand.set(key, entry);
    }
    return {
      teams: teams.map((t) => ({ name: t.name, cohort: t.cohort, fairShareWeight: t.fairShareWeight, preemption: { withinTeam: t.withinTeam, reclaimWithinCohort: t.reclaimWithinCohort } })),
      quotas,
      cohorts,
      running: held.map(
        (r, i): RunningJob => ({
          ...spec(`${r.id}/${i}`, r.team, [r.flavor], 1),
          flavor: r.flavor,
          placement: [{ replica: 0, node: '', accelerators: r.accelerators, cpuMillis: 0, memoryMiB: 0 }],
          admittedAt: 0,
        }),
      ),
      pending: [...demand.values()].map((p, i): PendingJob => spec(`pending/${i}`, p.team, p.flavors, p.accelerators)),
    };
  }
}
