import type { Prisma } from '../generated/prisma/client.js';
import { JOB_SUMMARY_SELECT, type JobSummary } from './job.records.js';
import { jobSummaries } from './job-summaries.js';
import type { DbHandle } from './db-handle.js';

/** The states a job holds in the queue or on the fleet (the console's Queue page). */
export type ActiveState = 'PENDING' | 'ADMITTED' | 'BINDING' | 'RUNNING';

export interface QueueFilter {
  /** ['PENDING'], or some of the states that hold accelerators. */
  states: readonly ActiveState[];
  /** Only these teams (a member's teams); undefined = every team. */
  teams?: readonly string[];
  team?: string;
  /** PENDING: jobs that accept this flavor; otherwise jobs admitted onto it. */
  flavor?: string;
  limit: number;
  offset: number;
}

export interface QueuePage {
  /** Summaries, without pod templates (GET /v1/jobs/{id} has them). */
  items: JobSummary[];
  /** Jobs matching the filter, all pages together. */
  total: number;
}

/**
 * Active jobs in the order that matters for each state. PENDING: the order the scheduler will consider
 * them, as its last cycle wrote it (1. pending_position ascending; 2. jobs no cycle has seen yet, oldest
 * queued first; 3. id, a deterministic tie-break). ADMITTED/BINDING/RUNNING: longest held first
 * (admitted_at, then id). Offset pagination: positions move every cycle, so a cursor would not be stable either.
 */
export class QueueRepository {
  constructor(private readonly db: DbHandle) {}

  async list(f: QueueFilter): Promise<QueuePage> {
    const pending = f.states.includes('PENDING');
    if (pending && f.states.length > 1)
      throw new Error('PENDING is listed alone: its order differs from the other states');
    const and: Prisma.JobWhereInput[] = [{ state: { in: [...f.states] } }];
    if (f.teams !== undefined) and.push({ team: { in: [...f.teams] } });
    if (f.team !== undefined) and.push({ team: f.team });
    if (f.flavor !== undefined) and.push(pending ? { flavors: { has: f.flavor } } : { flavor: f.flavor });
    const where = { AND: and };
    const orderBy: Prisma.JobOrderByWithRelationInput[] = pending
      ? [{ pendingPosition: { sort: 'asc', nulls: 'last' } }, { queuedAt: 'asc' }, { id: 'asc' }]
      : [{ admittedAt: { sort: 'asc', nulls: 'last' } }, { id: 'asc' }];
    const [page, total] = await Promise.all([
      this.db.prisma.job.findMany({ where, select: JOB_SUMMARY_SELECT, orderBy, take: f.limit, skip: f.offset }),
      this.db.prisma.job.count({ where }),
    ]);
    return { items: await jobSummaries(this.db, page), total };
  }
}
