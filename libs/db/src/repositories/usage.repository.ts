import type { JobSpec, PendingJob, RunningJob, Snapshot } from '#core';
import type { DbHandle } from './db-handle.js';

export type UsageInputs = Pick<Snapshot, 'teams' | 'quotas' | 'running' | 'pending' | 'cohorts'>;

/**
 * What `teamUsage` (libs/core) needs, read from live rows: teams, quotas, cohorts, every job holding an
 * allocation (with its allocated accelerators per flavor), and the pending demand. Pending jobs with the
 * same team and flavor list are folded into one entry of `Σ replicas × acceleratorsPerReplica`
 * accelerators (replicas = that sum, 1 per replica), which `teamUsage` counts identically, so the read
 * stays small with tens of thousands of pending jobs.
 */
export class UsageRepository {
  constructor(private readonly db: DbHandle) {}

  async load(): Promise<UsageInputs> {
    const [teams, quotas, cohorts, running, pending] = await Promise.all([
      this.db.pool.query<{ name: string; cohort: string | null; w: number; wt: Snapshot['teams'][number]['preemption']['withinTeam']; rc: Snapshot['teams'][number]['preemption']['reclaimWithinCohort'] }>(
        'SELECT name, cohort, fair_share_weight AS w, within_team AS wt, reclaim_within_cohort AS rc FROM teams',
      ),
      this.db.pool.query<{ team: string; flavor: string; nominal: number; b: number | null; l: number | null }>(
        'SELECT team, flavor, nominal, borrowing_limit AS b, lending_limit AS l FROM quotas',
      ),
      this.db.pool.query<{ name: string }>('SELECT name FROM cohorts'),
      this.db.pool.query<{ id: string; team: string; flavor: string; accelerators: number }>(
        `SELECT j.id, j.team, a.flavor, sum(a.accelerators)::int AS accelerators
         FROM allocations a JOIN jobs j ON j.id = a.job_id
         WHERE j.state IN ('ADMITTED', 'BINDING', 'RUNNING') GROUP BY j.id, j.team, a.flavor`,
      ),
      this.db.pool.query<{ team: string; flavors: string[]; demand: string }>(
        `SELECT team, flavors, sum(replicas::bigint * accelerators_per_replica)::text AS demand
         FROM jobs WHERE state = 'PENDING' GROUP BY team, flavors`,
      ),
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
    return {
      teams: teams.rows.map((t) => ({ name: t.name, cohort: t.cohort, fairShareWeight: t.w, preemption: { withinTeam: t.wt, reclaimWithinCohort: t.rc } })),
      quotas: quotas.rows.map((q) => ({ team: q.team, flavor: q.flavor, nominal: q.nominal, borrowingLimit: q.b, lendingLimit: q.l })),
      cohorts: cohorts.rows.map((c) => ({ name: c.name })),
      running: running.rows.map(
        (r, i): RunningJob => ({
          ...spec(`${r.id}/${i}`, r.team, [r.flavor], 1),
          flavor: r.flavor,
          placement: [{ replica: 0, node: '', accelerators: r.accelerators, cpuMillis: 0, memoryMiB: 0 }],
          admittedAt: 0,
        }),
      ),
      pending: pending.rows.map((p, i): PendingJob => spec(`pending/${i}`, p.team, p.flavors, Number(p.demand))),
    };
  }
}
