import { Inject, Injectable } from '@nestjs/common';
import { forbidden, notFound, type FieldError } from '#common';
import { AuditRepository, CycleHistoryRepository, FleetRepository, JobRepository, QueueRepository, type ActiveState } from '#db';
import { canActForTeam, type Principal } from '../auth/principal.js';
import { eventView, jobSummaryView } from '../jobs/job.view.js';
import { validationFailed } from '../validation/validation.pipe.js';
import type { HistoryResolution } from '#db';
import { timeParam } from '../accounting/usage-window.js';
import type { AuditQuery, FleetHistoryQuery, HistoryQuery, QueueQuery } from './console.dto.js';
import {
  fleetNodeView,
  type AuditView,
  type FleetHistoryView,
  type FleetNodeListView,
  type HistoryView,
  type OverviewView,
  type PlacementView,
  type QueueView,
} from './console.view.js';
import { visibleTeams } from './scope.js';

const MAX_BUCKETS = 500;


/** Most rows one GET /v1/fleet/history answers. */
export const MAX_HISTORY_POINTS = 10_000;
const DEFAULT_HISTORY_SPAN_MS: Record<HistoryResolution, number> = { minute: 2 * 3_600_000, hour: 7 * 86_400_000, day: 90 * 86_400_000 };

/**
 * The web console's read models (queue order, fleet allocation, cycle history, placement with topology,
 * audit trail): scope by the caller's teams, defaults, paging, and the views. Read-only.
 */
@Injectable()
export class ConsoleService {
  constructor(
    @Inject(QueueRepository) private readonly queue: QueueRepository,
    @Inject(FleetRepository) private readonly fleet: FleetRepository,
    @Inject(CycleHistoryRepository) private readonly cycles: CycleHistoryRepository,
    @Inject(AuditRepository) private readonly audit: AuditRepository,
    @Inject(JobRepository) private readonly jobs: JobRepository,
  ) {}

  /** Capacity per flavor (cluster-wide), and the caller's pending jobs by reason and active jobs by state. */
  async overview(caller: Principal): Promise<OverviewView> {
    const teams = visibleTeams(caller);
    const [flavors, pendingByReason, jobs] = await Promise.all([this.fleet.capacity(), this.fleet.pendingByReason(teams), this.fleet.activeJobs(teams)]);
    return {
      scope: teams === undefined ? 'all teams' : [...teams],
      flavors,
      pendingByReason,
      jobs: Object.fromEntries(jobs.map((j) => [j.state, j.jobs])),
    };
  }

  /** Committed cycles per bucket of `stepMinutes` over the last `hours` (at most MAX_BUCKETS buckets: 400 naming stepMinutes). */
  async history(q: HistoryQuery, until: Date): Promise<HistoryView> {
    const hours = q.hours ?? 6;
    const stepMinutes = q.stepMinutes ?? 15;
    if ((hours * 60) / stepMinutes > MAX_BUCKETS) {
      throw validationFailed([
        { field: 'stepMinutes', message: `makes more than ${MAX_BUCKETS} buckets over ${hours} h; use at least ${Math.ceil((hours * 60) / MAX_BUCKETS)}` },
      ]);
    }
    const since = new Date(until.getTime() - hours * 3_600_000);
    const buckets = await this.cycles.buckets(since, until, stepMinutes * 60);
    return { since: since.toISOString(), until: until.toISOString(), stepMinutes, buckets: buckets.map((b) => ({ ...b, at: b.at.toISOString() })) };
  }

  async queuePage(q: QueueQuery, caller: Principal): Promise<QueueView> {
    const limit = q.limit ?? 50;
    const offset = q.offset ?? 0;
    const page = await this.queue.list({
      // The DTO's pattern admits PENDING alone or some of the holding states.
      states: [...new Set((q.state ?? 'PENDING').split(','))] as ActiveState[],
      teams: visibleTeams(caller, q.team),
      team: q.team,
      flavor: q.flavor,
      limit,
      offset,
    });
    return { items: page.items.map(jobSummaryView), total: page.total, limit, offset };
  }

  /**
   * The fleet history of a window (default: the last 2 h of minutes, 7 days of hours or 90 days of days):
   * flavor rows for everyone, team rows for the caller's teams (all for admins). More than
   * MAX_HISTORY_POINTS rows is a 400 naming `from`, with what to narrow.
   */
  async fleetHistory(q: FleetHistoryQuery, caller: Principal, now: Date): Promise<FleetHistoryView> {
    const teams = visibleTeams(caller, q.team);
    const resolution: HistoryResolution = q.resolution ?? 'hour';
    const errors: FieldError[] = [];
    const to = q.to === undefined ? now : timeParam('to', q.to, errors);
    const from = q.from === undefined ? (to === undefined ? undefined : new Date(to.getTime() - DEFAULT_HISTORY_SPAN_MS[resolution])) : timeParam('from', q.from, errors);
    if (from !== undefined && to !== undefined && from >= to) errors.push({ field: 'to', message: 'must be after from' });
    if (errors.length > 0 || from === undefined || to === undefined) throw validationFailed(errors);
    const rows = await this.fleet.history({ resolution, from, to, ...(q.flavor ? { flavor: q.flavor } : {}), ...(teams ? { teams } : {}), ...(q.team ? { team: q.team } : {}), limit: MAX_HISTORY_POINTS + 1 });
    if (rows.length > MAX_HISTORY_POINTS) {
      throw validationFailed([
        { field: 'from', message: `the window holds more than ${MAX_HISTORY_POINTS} rows at resolution ${resolution}: start later, name a flavor or a team, or use a coarser resolution` },
      ]);
    }
    return {
      resolution,
      from: from.toISOString(),
      to: to.toISOString(),
      items: rows.map((r) => ({ ...r, at: r.at.toISOString() })),
    };
  }

  async fleetNodes(): Promise<FleetNodeListView> {
    return { items: (await this.fleet.nodes()).map(fleetNodeView) };
  }

  /** 404 for an unknown job, 403 for a job of a team the caller may not act for. */
  async placement(id: string, caller: Principal): Promise<PlacementView> {
    const job = await this.jobs.get(id);
    if (!job) throw notFound(`job ${id}`);
    if (!canActForTeam(caller, job.team)) throw forbidden(`job ${id} belongs to team ${job.team}, which ${caller.subject} may not act for`);
    const nodes = new Map((await this.fleet.nodes([...new Set(job.allocation.map((a) => a.node))])).map((n) => [n.name, n]));
    return {
      flavor: job.flavor,
      items: job.allocation.map((a) => {
        const n = nodes.get(a.node);
        return { replica: a.replica, node: a.node, accelerators: a.accelerators, zone: n?.zone ?? null, block: n?.block ?? null, domain: n?.domain ?? null, tpuShape: n?.tpuShape ?? null };
      }),
    };
  }

  /** Newest first, a page of `limit` (50) with the id to pass as `before` for the next one. */
  async auditPage(q: AuditQuery, caller: Principal): Promise<AuditView> {
    const limit = q.limit ?? 50;
    const rows = await this.audit.list({ teams: visibleTeams(caller, q.team), team: q.team, limit: limit + 1, before: q.before });
    const page = rows.slice(0, limit);
    return {
      items: page.map((e) => ({ ...eventView(e), team: e.team })),
      nextBefore: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
    };
  }
}
