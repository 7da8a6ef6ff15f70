import type { JobRecord } from './job.records.js';
import { JOB_COLUMNS, toRecord, type JobRow } from './job.rows.js';
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
  items: JobRecord[];
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
    const values: unknown[] = [f.states];
    const where = ['state = ANY($1::job_state[])'];
    const add = (sql: string, value: unknown): void => {
      values.push(value);
      where.push(sql.replaceAll('?', `$${values.length}`));
    };
    if (f.teams !== undefined) add('team = ANY(?::text[])', f.teams);
    if (f.team !== undefined) add('team = ?', f.team);
    if (f.flavor !== undefined) add(pending ? '? = ANY(flavors)' : 'flavor = ?', f.flavor);
    const order = pending
      ? 'pending_position ASC NULLS LAST, queued_at ASC, id ASC'
      : 'admitted_at ASC NULLS LAST, id ASC';
    const filter = where.join(' AND ');
    const n = values.length;
    const [page, count] = await Promise.all([
      this.db.pool.query<JobRow>(
        `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${filter} ORDER BY ${order} LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...values, f.limit, f.offset],
      ),
      this.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${filter}`, values),
    ]);
    return { items: page.rows.map(toRecord), total: count.rows[0]!.n };
  }
}
