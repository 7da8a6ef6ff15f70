import type { JobState } from '#core';
import { inTransaction, type DbHandle } from './db-handle.js';
import { UUID } from '../uuid.js';

/** What a hold of one job did. */
export type HoldChange = { kind: 'missing' } | { kind: 'not-pending'; state: JobState } | { kind: 'changed' | 'unchanged' };

/** What a release of one job did: a member may not release a job an admin held. */
export type ReleaseChange = { kind: 'missing' } | { kind: 'admin-hold'; heldBy: string } | { kind: 'changed' | 'unchanged' };

/** Which of a team's jobs a bulk hold or release takes. */
export interface HoldFilter {
  team: string;
  name?: string;
  createdBy?: string;
}

export interface HeldJob {
  id: string;
  name: string;
}

const heldMessage = (actor: string, admin: boolean): string => `held by ${actor}${admin ? ' (an admin: only an admin releases it)' : ''}; released with qm release or POST /v1/jobs/{id}/release`;
const releasedMessage = (actor: string): string => `released by ${actor}; waiting for the next scheduling cycle`;

/**
 * Holds (Slurm's `scontrol hold`): a PENDING job held stays out of the scheduler's snapshot (snapshot-rows.ts reads
 * only pending jobs without `held_at`) until released, and keeps its place in the queue (its submission time).
 * Not a state change: the lifecycle is untouched; its version moves on, so a cycle that read it before the hold
 * admits nothing for it, and its pending reason is HELD (a cycle never overwrites a held job's reason). Each
 * hold and release is a `job.held` / `job.released` event of the job; a bulk one is also one `jobs.held` /
 * `jobs.released` audit entry (who, the filter, the jobs), in the same transaction.
 */
export class JobHoldsRepository {
  constructor(private readonly db: DbHandle) {}

  async hold(id: string, actor: string, admin: boolean): Promise<HoldChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const { rows } = await this.db.pool.query<{ state: JobState; changed: boolean }>(
      `WITH o AS (SELECT id, state, team, held_at FROM jobs WHERE id = $1 FOR UPDATE),
       u AS (${holdUpdate('o.state = \'PENDING\' AND o.held_at IS NULL')}),
       e AS (INSERT INTO events (kind, job_id, team, actor, message) SELECT 'job.held', u.id, u.team, $2::text, $4::text FROM u)
       SELECT o.state::text AS state, EXISTS (SELECT 1 FROM u) AS changed FROM o`,
      [id, actor, admin, heldMessage(actor, admin)],
    );
    const row = rows[0];
    if (row === undefined) return { kind: 'missing' };
    if (row.state !== 'PENDING') return { kind: 'not-pending', state: row.state };
    return { kind: row.changed ? 'changed' : 'unchanged' };
  }

  /** Releases a held job (a job not held: unchanged). Only an admin releases what an admin held. */
  async release(id: string, actor: string, admin: boolean): Promise<ReleaseChange> {
    if (!UUID.test(id)) return { kind: 'missing' };
    const { rows } = await this.db.pool.query<{ state: JobState; held_by: string | null; by_admin: boolean; changed: boolean }>(
      `WITH o AS (SELECT id, state, team, held_at, held_by, held_by_admin FROM jobs WHERE id = $1 FOR UPDATE),
       u AS (${releaseUpdate('o.state = \'PENDING\' AND o.held_at IS NOT NULL AND (NOT o.held_by_admin OR $3::boolean)')}),
       e AS (INSERT INTO events (kind, job_id, team, actor, message) SELECT 'job.released', u.id, u.team, $2::text, $4::text FROM u)
       SELECT o.state::text AS state, o.held_by, o.held_at IS NOT NULL AND o.held_by_admin AS by_admin, EXISTS (SELECT 1 FROM u) AS changed FROM o`,
      [id, actor, admin, releasedMessage(actor)],
    );
    const row = rows[0];
    if (row === undefined) return { kind: 'missing' };
    if (row.state === 'PENDING' && row.by_admin && !admin) return { kind: 'admin-hold', heldBy: row.held_by ?? 'an admin' };
    return { kind: row.changed ? 'changed' : 'unchanged' };
  }

  /**
   * Holds, oldest first, at most `limit` of the team's PENDING jobs not yet held (named `name`, submitted by
   * `createdBy`, when given): the ones held, and whether more matched. `dryRun`: which would be, nothing written.
   */
  async holdMatching(filter: HoldFilter, limit: number, actor: string, admin: boolean, dryRun = false): Promise<{ jobs: HeldJob[]; more: boolean }> {
    return this.matching('hold', filter, limit, actor, admin, dryRun);
  }

  /** Releases, oldest first, at most `limit` of the team's held jobs (a member: not those an admin held). */
  async releaseMatching(filter: HoldFilter, limit: number, actor: string, admin: boolean, dryRun = false): Promise<{ jobs: HeldJob[]; more: boolean }> {
    return this.matching('release', filter, limit, actor, admin, dryRun);
  }

  private async matching(what: 'hold' | 'release', filter: HoldFilter, limit: number, actor: string, admin: boolean, dryRun: boolean): Promise<{ jobs: HeldJob[]; more: boolean }> {
    const which = what === 'hold' ? 'held_at IS NULL' : 'held_at IS NOT NULL AND (NOT held_by_admin OR $5::boolean)';
    const { rows } = await this.db.pool.query<HeldJob>(
      `SELECT id::text AS id, name FROM jobs
       WHERE team = $1 AND state = 'PENDING' AND ${which} AND ($2::text IS NULL OR name = $2) AND ($3::text IS NULL OR created_by = $3)
       ORDER BY submitted_at, id LIMIT $4`,
      [filter.team, filter.name ?? null, filter.createdBy ?? null, limit + 1, ...(what === 'release' ? [admin] : [])],
    );
    const batch = rows.slice(0, limit);
    const more = rows.length > limit;
    if (batch.length === 0 || dryRun) return { jobs: batch, more };
    const [event, audit, message] =
      what === 'hold' ? ['job.held', 'jobs.held', heldMessage(actor, admin)] : ['job.released', 'jobs.released', releasedMessage(actor)];
    const changed = await inTransaction(this.db.pool, async (client) => {
      // Each row re-checked under its lock: one cancelled, admitted, held or released meanwhile is left as it is.
      const condition =
        what === 'hold' ? "o.state = 'PENDING' AND o.held_at IS NULL" : "o.state = 'PENDING' AND o.held_at IS NOT NULL AND (NOT o.held_by_admin OR $3::boolean)";
      const update = what === 'hold' ? holdUpdate(condition) : releaseUpdate(condition);
      const { rows: done } = await client.query<HeldJob>(
        `WITH o AS (SELECT id, state, team, held_at, held_by_admin FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE),
         u AS (${update}),
         e AS (INSERT INTO events (kind, job_id, team, actor, message) SELECT '${event}', u.id, u.team, $2::text, $4::text FROM u)
         SELECT u.id::text AS id, u.name FROM u JOIN jobs j ON j.id = u.id ORDER BY j.submitted_at, j.id`,
        [batch.map((r) => r.id), actor, admin, message],
      );
      if (done.length > 0) {
        const by = [...(filter.name ? [`name ${filter.name}`] : []), ...(filter.createdBy ? [`createdBy ${filter.createdBy}`] : [])].join(', ') || 'every pending job';
        const verb = what === 'hold' ? 'held' : 'released';
        await client.query(`INSERT INTO events (kind, team, actor, message, data) VALUES ($1, $2, $3, $4, $5)`, [
          audit,
          filter.team,
          actor,
          `${done.length} job(s) of team ${filter.team} ${verb} by ${actor} (${by})`,
          JSON.stringify({ filter, jobs: done.map((j) => j.id) }),
        ]);
      }
      return done;
    });
    return { jobs: changed, more };
  }
}

/** The hold's UPDATE of the rows of `o` meeting `condition` ($2 actor, $3 admin, $4 the reason), returning id, team and name. */
function holdUpdate(condition: string): string {
  return `UPDATE jobs j SET held_by = $2::text, held_at = now(), held_by_admin = $3::boolean, version = j.version + 1, updated_at = now(),
            pending_code = 'HELD', pending_message = $4::text, pending_position = NULL, pending_estimated_start_at = NULL, reservation = NULL
          FROM o WHERE j.id = o.id AND ${condition}
          RETURNING j.id, j.team, j.name`;
}

/** The release's UPDATE: the job waits for the next cycle's reason. */
function releaseUpdate(condition: string): string {
  return `UPDATE jobs j SET held_by = NULL, held_at = NULL, held_by_admin = false, version = j.version + 1, updated_at = now(),
            pending_code = NULL, pending_message = $4::text
          FROM o WHERE j.id = o.id AND ${condition}
          RETURNING j.id, j.team, j.name`;
}
