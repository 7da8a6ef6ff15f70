import type { ClusterNode, Cohort, Flavor, PendingJob, Quota, RunningJob, SchedulerOptions, Snapshot, Team } from '#core';
import {
  cohortOf,
  flavorOf,
  nodeOf,
  pendingJobOf,
  placementsOf,
  quotaOf,
  runningJobOf,
  teamOf,
  type ActiveJobRow,
  type AllocationRow,
  type FlavorRow,
  type NodeRow,
  type QuotaRow,
  type TeamRow,
} from './snapshot-rows.js';
import type { SnapshotWithVersions } from './load-snapshot.js';

/**
 * What one read of the snapshot returned (cycle-session.ts). A full read has every row and no keys; an
 * incremental read has the rows that changed since the previous read, and the keys the change log named
 * (a named key without a row was deleted, or left the snapshot: a job that ended).
 */
export interface SnapshotRows {
  /** Present when the table changed (incremental) or always (full): the whole small table. */
  flavors?: FlavorRow[];
  cohorts?: { name: string }[];
  teams?: TeamRow[];
  quotas?: QuotaRow[];
  nodes: NodeRow[];
  /** Incremental only: node names the change log named. */
  nodeKeys?: string[];
  /** Running and pending jobs read. */
  jobs: ActiveJobRow[];
  /** Allocations of the running jobs read. */
  allocations: AllocationRow[];
  /** Incremental only: job ids the change log named. */
  jobKeys?: string[];
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The scheduler leader's copy of what the snapshot is made of — fleet, tenancy, running jobs with their
 * allocations, pending jobs, and every job's version — kept between cycles and brought up to date with
 * what changed (`apply`). `snapshot()` assembles the core's Snapshot from it in the same order whatever
 * way it was filled: nodes by name, running jobs by admission time then id, pending by submission time
 * then id (JavaScript code-unit order, the database's C collation for these names).
 */
export class SnapshotState {
  private flavors: Flavor[] = [];
  private cohorts: Cohort[] = [];
  private teams: Team[] = [];
  private quotas: Quota[] = [];
  private readonly nodes = new Map<string, ClusterNode>();
  private readonly running = new Map<string, RunningJob>();
  private readonly pending = new Map<string, PendingJob>();
  private readonly versions = new Map<string, number>();
  private sortedNodes: ClusterNode[] | null = null;
  private sortedRunning: RunningJob[] | null = null;
  private sortedPending: PendingJob[] | null = null;

  /** A state from a full read. */
  static from(rows: SnapshotRows): SnapshotState {
    const state = new SnapshotState();
    state.apply(rows);
    return state;
  }

  /** Applies a read: replaces what it names (a full read names everything). */
  apply(rows: SnapshotRows): void {
    if (rows.flavors) this.flavors = rows.flavors.map(flavorOf).sort(byName);
    if (rows.cohorts) this.cohorts = rows.cohorts.map(cohortOf).sort(byName);
    if (rows.teams) this.teams = rows.teams.map(teamOf).sort(byName);
    if (rows.quotas) this.quotas = rows.quotas.map(quotaOf).sort((a, b) => byId(a.team, b.team) || byId(a.flavor, b.flavor));

    for (const name of rows.nodeKeys ?? []) this.nodes.delete(name);
    for (const r of rows.nodes) this.nodes.set(r.name, nodeOf(r));
    if ((rows.nodeKeys?.length ?? 0) > 0 || rows.nodes.length > 0) this.sortedNodes = null;

    if (rows.jobKeys) {
      for (const id of rows.jobKeys) {
        if (this.running.delete(id)) this.sortedRunning = null;
        if (this.pending.delete(id)) this.sortedPending = null;
        this.versions.delete(id);
      }
    }
    const placements = placementsOf(rows.allocations);
    for (const r of rows.jobs) {
      this.versions.set(r.id, r.version);
      if (r.state === 'PENDING') {
        this.running.delete(r.id);
        this.pending.set(r.id, pendingJobOf(r));
      } else {
        this.pending.delete(r.id);
        this.running.set(r.id, runningJobOf(r, placements.get(r.id) ?? []));
      }
    }
    if (rows.jobs.length > 0) {
      this.sortedRunning = null;
      this.sortedPending = null;
    }
  }

  /** The core's Snapshot at `now` (without budget blocks) and the version of every job in it. */
  snapshot(now: number, options: SchedulerOptions): SnapshotWithVersions {
    this.sortedNodes ??= [...this.nodes.values()].sort(byName);
    this.sortedRunning ??= [...this.running.values()].sort((a, b) => a.admittedAt - b.admittedAt || byId(a.id, b.id));
    this.sortedPending ??= [...this.pending.values()].sort((a, b) => a.submittedAt - b.submittedAt || byId(a.id, b.id));
    const snapshot: Snapshot = {
      now,
      flavors: this.flavors,
      nodes: this.sortedNodes,
      cohorts: this.cohorts,
      teams: this.teams,
      quotas: this.quotas,
      running: this.sortedRunning,
      pending: this.sortedPending,
      options,
    };
    return { snapshot, versions: this.versions };
  }

  /** How many jobs and nodes it holds (for logs). */
  get size(): { nodes: number; running: number; pending: number } {
    return { nodes: this.nodes.size, running: this.running.size, pending: this.pending.size };
  }

  /**
   * Where this state and `other` differ (empty when they are equal), one line per difference: what the
   * run-time check logs when the incremental state is not what a full read gives.
   */
  differences(other: SnapshotState): string[] {
    const out: string[] = [];
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    for (const part of ['flavors', 'cohorts', 'teams', 'quotas'] as const) {
      if (!same(this[part], other[part])) out.push(`${part}: ${JSON.stringify(this[part])} vs ${JSON.stringify(other[part])}`);
    }
    const compare = <T>(what: string, mine: ReadonlyMap<string, T>, theirs: ReadonlyMap<string, T>): void => {
      for (const [key, value] of mine) {
        if (!theirs.has(key)) out.push(`${what} ${key}: only in this state`);
        else if (!same(value, theirs.get(key))) out.push(`${what} ${key}: ${JSON.stringify(value)} vs ${JSON.stringify(theirs.get(key))}`);
      }
      for (const key of theirs.keys()) if (!mine.has(key)) out.push(`${what} ${key}: missing from this state`);
    };
    compare('node', this.nodes, other.nodes);
    compare('running job', this.running, other.running);
    compare('pending job', this.pending, other.pending);
    compare('version of job', this.versions, other.versions);
    return out;
  }
}
