import type { DbHandle } from './db-handle.js';
import type { Prisma } from '../generated/prisma/client.js';
import { EVENT_SELECT, toEventRecord, type EventRecord } from './job.records.js';

/** Event kinds of the tenancy audit trail (changes made by people, not scheduling decisions). */
export const AUDIT_KINDS = [
  'quota.created',
  'quota.updated',
  'quota.deleted',
  'budget.created',
  'budget.updated',
  'budget.deleted',
  // Creations, changes (with the true before) and deletions of tenancy objects: a team's own events carry
  // the team; flavors', cohorts' and nodes' carry none, so admins only read them.
  'team.created',
  'team.updated',
  'team.deleted',
  'cohort.created',
  'cohort.updated',
  'cohort.deleted',
  'flavor.created',
  'flavor.updated',
  'flavor.deleted',
  'node.created',
  'node.updated',
  'node.deleted',
  // Priority classes (their values decide who may preempt whom): no team, admins only.
  'priorityClass.created',
  'priorityClass.updated',
  'priorityClass.deleted',
  // API tokens created and revoked (who for, which role and teams, by whom; never the secret): no team, admins only.
  'token.created',
  'token.revoked',
  // A bulk cancel by filter (POST /v1/jobs/cancellations): how many of the team's jobs, by which filter, by whom.
  'jobs.cancelled',
  // Bulk holds and releases by filter (POST /v1/jobs/holds, /v1/jobs/releases), likewise.
  'jobs.held',
  'jobs.released',
] as const;

export interface AuditFilter {
  /** Only these teams (a member's teams); undefined = every team. */
  teams?: readonly string[];
  team?: string;
  limit: number;
  /** Only events with an id below this one (the next page): decimal digits (the API validates them). */
  before?: string;
}

/** The audit trail of tenancy changes (quota and budget edits: who, when, before and after; deletions of teams, cohorts and nodes; tokens created and revoked), newest first. */
export class AuditRepository {
  constructor(private readonly db: DbHandle) {}

  async list(f: AuditFilter): Promise<EventRecord[]> {
    const and: Prisma.EventWhereInput[] = [{ kind: { in: [...AUDIT_KINDS] } }];
    if (f.teams !== undefined) and.push({ team: { in: [...f.teams] } });
    if (f.team !== undefined) and.push({ team: f.team });
    if (f.before !== undefined) and.push({ id: { lt: BigInt(f.before) } });
    const rows = await this.db.prisma.event.findMany({ where: { AND: and }, select: EVENT_SELECT, orderBy: { id: 'desc' }, take: f.limit });
    return rows.map(toEventRecord);
  }
}
