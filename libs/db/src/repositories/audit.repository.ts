import type { DbHandle } from './db-handle.js';
import type { EventRecord } from './job.records.js';

/** Event kinds of the tenancy audit trail (changes made by people, not scheduling decisions). */
export const AUDIT_KINDS = [
  'quota.created',
  'quota.updated',
  'quota.deleted',
  'budget.created',
  'budget.updated',
  'budget.deleted',
  // Deletions of tenancy objects (their own team for team.deleted; no team, so admins only, for the others).
  'team.deleted',
  'cohort.deleted',
  'node.deleted',
] as const;

export interface AuditFilter {
  /** Only these teams (a member's teams); undefined = every team. */
  teams?: readonly string[];
  team?: string;
  limit: number;
  /** Only events with an id below this one (the next page). */
  before?: string;
}

/** The audit trail of tenancy changes (quota and budget edits: who, when, before and after; deletions of teams, cohorts and nodes), newest first. */
export class AuditRepository {
  constructor(private readonly db: DbHandle) {}

  async list(f: AuditFilter): Promise<EventRecord[]> {
    const { rows } = await this.db.pool.query<{
      id: string;
      at: Date;
      kind: string;
      team: string | null;
      actor: string;
      message: string;
      data: unknown;
    }>(
      `SELECT id::text AS id, at, kind, team, actor, message, data FROM events
       WHERE kind = ANY($1::text[]) AND ($2::text[] IS NULL OR team = ANY($2::text[])) AND ($3::text IS NULL OR team = $3)
         AND ($4::bigint IS NULL OR id < $4::bigint)
       ORDER BY events.id DESC LIMIT $5`,
      [AUDIT_KINDS, f.teams ?? null, f.team ?? null, f.before ?? null, f.limit],
    );
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      kind: r.kind,
      jobId: null,
      team: r.team,
      actor: r.actor,
      message: r.message,
      data: r.data,
    }));
  }
}
