import type { BudgetedSnapshot, SchedulerOptions, Snapshot } from '#core';
import type { PoolClient } from 'pg';
import { readBudgetLimits } from '../accounting/budgets.js';
import {
  allocationsSql,
  cohortOf,
  cohortsSql,
  flavorOf,
  flavorsSql,
  nodeOf,
  nodesSql,
  pendingJobOf,
  pendingJobsSql,
  placementsOf,
  quotaOf,
  quotasSql,
  runningJobOf,
  runningJobsSql,
  teamOf,
  teamsSql,
  type AllocationRow,
  type FlavorRow,
  type JobRow,
  type NodeRow,
  type QuotaRow,
  type RunningJobRow,
  type TeamRow,
} from './snapshot-rows.js';
import type { SqlHandle } from './sql-handle.js';

/** A snapshot plus the `version` of every job in it, for commitCycle's optimistic checks. */
export interface SnapshotWithVersions {
  /** With the used-up `block`/`stop` budgets (budgetBlocks, budgetStops) when there are any. */
  snapshot: BudgetedSnapshot;
  /** jobId → jobs.version as read. */
  versions: Map<string, number>;
}

/**
 * Builds the core's Snapshot from Postgres in 8 set-based queries (more per budget period kind in use
 * by a `block` or `stop` budget) inside one REPEATABLE READ,
 * READ ONLY transaction, so every part (nodes, quotas, running jobs with their allocations, the
 * queue) is of the same instant. `now` (epoch ms) and `options` are passed through.
 *
 * A running job carries `preempted` (the victims of its current admission) when it has any.
 *
 * Orders (the core is deterministic given its input): flavors, nodes, cohorts, teams by name; quotas
 * by team, flavor; running jobs by admission time, id; placements by replica; pending by submission
 * time, id.
 */
export async function loadSnapshot(db: SqlHandle, now: number, options: SchedulerOptions): Promise<BudgetedSnapshot> {
  return (await loadSnapshotWithVersions(db, now, options)).snapshot;
}

export async function loadSnapshotWithVersions(
  db: SqlHandle,
  now: number,
  options: SchedulerOptions,
): Promise<SnapshotWithVersions> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const flavors = (await client.query<FlavorRow>(flavorsSql())).rows.map(flavorOf);
    const nodes = (await client.query<NodeRow>(nodesSql())).rows.map(nodeOf);
    const cohorts = (await client.query<{ name: string }>(cohortsSql())).rows.map(cohortOf);
    const teams = (await client.query<TeamRow>(teamsSql())).rows.map(teamOf);
    const quotas = (await client.query<QuotaRow>(quotasSql())).rows.map(quotaOf);
    const versions = new Map<string, number>();
    const running = await readRunning(client, versions);
    const pending = (await client.query<JobRow>(pendingJobsSql())).rows.map((r) => {
      versions.set(r.id, r.version);
      return pendingJobOf(r);
    });
    // Teams whose `block` or `stop` budget is used up for the current period (usage ledger; none without budgets).
    const limits = await readBudgetLimits(client, new Date(now));
    await client.query('COMMIT');
    const snapshot: BudgetedSnapshot = { now, flavors, nodes, cohorts, teams, quotas, running, pending, options };
    if (limits.blocks.length > 0) snapshot.budgetBlocks = limits.blocks;
    if (limits.stops.length > 0) snapshot.budgetStops = limits.stops;
    return { snapshot, versions };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function readRunning(client: PoolClient, versions: Map<string, number>): Promise<Snapshot['running']> {
  const jobs = await client.query<RunningJobRow>(runningJobsSql());
  const placements = placementsOf((await client.query<AllocationRow>(allocationsSql())).rows);
  return jobs.rows.map((r) => {
    versions.set(r.id, r.version);
    return runningJobOf(r, placements.get(r.id) ?? []);
  });
}
