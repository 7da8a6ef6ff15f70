import { DEFAULT_OPTIONS } from '#core';
import { loadSnapshot, readJobHistory, type Database } from '#db';
import { historyToTrace, type ClusterSpec, type TenancySpec, type Trace } from '#sim';

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
