import { DEFAULT_OPTIONS } from '#core';
import { loadSnapshot, type Database } from '#db';
import { historyToTrace, type ClusterSpec, type JobHistoryRow, type TenancySpec, type Trace } from '#sim';

/** Jobs submitted at or after `since`, and those submitted before it that had not ended by then; oldest first (ties by id). */
export async function readJobHistory(db: Database, since: Date): Promise<JobHistoryRow[]> {
  return db.prisma.job.findMany({
    where: { OR: [{ submittedAt: { gte: since } }, { finishedAt: null }, { finishedAt: { gt: since } }] },
    orderBy: [{ submittedAt: 'asc' }, { id: 'asc' }],
    select: {
      id: true,
      team: true,
      priority: true,
      preemptible: true,
      replicas: true,
      acceleratorsPerReplica: true,
      flavors: true,
      speeds: true,
      expectedRuntimeSeconds: true,
      checkpoint: true,
      resumeFraction: true,
      state: true,
      flavor: true,
      submittedAt: true,
      startedAt: true,
      finishedAt: true,
    },
  });
}

/** Fleet and tenancy as they are now, and the jobs of the window [since, now] with those running or waiting at `since`, from Postgres. */
export async function loadFromDatabase(db: Database, since: number, now: number): Promise<{ cluster: ClusterSpec; tenancy: TenancySpec; trace: Trace }> {
  const snapshot = await loadSnapshot(db, now, DEFAULT_OPTIONS);
  const rows = await readJobHistory(db, new Date(since));
  return {
    cluster: { flavors: snapshot.flavors, nodes: snapshot.nodes },
    tenancy: { cohorts: snapshot.cohorts, teams: snapshot.teams, quotas: snapshot.quotas },
    trace: historyToTrace(rows, snapshot.flavors, since, now),
  };
}
