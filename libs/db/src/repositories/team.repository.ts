import { EMPTY_POD_POLICY, type PodPolicy } from '#core';
import type { Prisma } from '../generated/prisma/client.js';
import type { DbHandle } from './db-handle.js';
import { isForeignKeyViolation, lockTenancyRow, TX_OPTIONS, writeTenancyEvent, type Tx } from './prisma-helpers.js';
import { MissingReferenceError, QUOTA_SELECT, TEAM_SELECT, podPolicyOf, teamRecord, type Deletion, type QuotaRecord, type TeamRecord, type Upserted } from './tenancy.records.js';
import { auditUpsert, type Audited } from './tenancy-audit.js';

/**
 * A team's settings; a ceiling or limit left out is null (the default) when the team is created and kept
 * when it is replaced.
 */
export type TeamInput = Omit<TeamRecord, 'name' | 'createdAt' | 'updatedAt' | 'maxPriorityClass' | 'maxPendingJobs' | 'submissionsPerSecond' | 'podPolicy' | 'namespaces'> &
  Partial<Pick<TeamRecord, 'maxPriorityClass' | 'maxPendingJobs' | 'submissionsPerSecond' | 'namespaces'>> & {
    /** The pod policy's lists to replace (the others keep theirs; empty for a new team); null empties every list. */
    podPolicy?: Partial<PodPolicy> | null;
  };

/** The stored policy after `change` (see TeamInput.podPolicy). */
const changedPolicy = (before: PodPolicy, change: Partial<PodPolicy> | null): PodPolicy =>
  change === null ? EMPTY_POD_POLICY : { ...before, ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };

/** `t` as Prisma writes it, its policy changed from `before`. */
function teamData(t: Partial<TeamInput>, before: PodPolicy) {
  const { podPolicy, ...rest } = t;
  return podPolicy === undefined ? rest : { ...rest, podPolicy: changedPolicy(before, podPolicy) as unknown as Prisma.InputJsonObject };
}

/** What a team's submissions are checked against: its own limits (null: the API's configured default) and its pod policy. */
export type TeamLimitsRecord = Pick<TeamRecord, 'name' | 'maxPendingJobs' | 'submissionsPerSecond' | 'podPolicy' | 'namespaces'>;

/** What keeps a team from being deleted. */
export interface TeamUse {
  /** Jobs not yet SUCCEEDED, FAILED or CANCELLED. */
  unfinishedJobs: number;
  /** Flavors it has a quota for. */
  quotas: string[];
  /** Periods it has a budget for. */
  budgets: string[];
  /** Side effects (pod deletion…) of its jobs not yet carried out. */
  pendingSideEffects: number;
}

export const teamInUse = (u: TeamUse): boolean => u.unfinishedJobs > 0 || u.quotas.length > 0 || u.budgets.length > 0 || u.pendingSideEffects > 0;

const FINISHED = ['SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

/** Teams (Prisma client). */
export class TeamRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Creates or replaces a team with its audit event (team.created, or team.updated with the true before) in
   * one transaction; inserted first, as quotas are, so concurrent creations give one creation. Throws
   * MissingReferenceError naming the cohort or the priority class that does not exist.
   */
  async upsert(name: string, t: TeamInput, actor: string): Promise<Upserted<TeamRecord>> {
    try {
      return await this.db.prisma.$transaction(async (tx) => {
        for (;;) {
          // INSERT … ON CONFLICT DO NOTHING RETURNING: a row back means it was created.
          const [row] = await tx.team.createManyAndReturn({ data: [{ name, ...teamData(t, EMPTY_POD_POLICY) }], skipDuplicates: true, select: TEAM_SELECT });
          if (row) {
            const created = teamRecord(row);
            await auditUpsert(tx, 'team', name, actor, null, audited(created));
            return { record: created, created: true };
          }
          const replaced = await changeTeam(tx, name, t, actor);
          if (replaced) return { record: replaced, created: false };
          // deleted in between: create it
        }
      }, TX_OPTIONS);
    } catch (error) {
      return this.missingReference(error, t);
    }
  }

  /**
   * Changes only the fields given (merge) with its team.updated event; concurrent patches of different
   * fields both stay (the row is locked, each writes only its fields). Null when there is no such team.
   * Throws MissingReferenceError naming the cohort or the priority class that does not exist.
   */
  async patch(name: string, t: Partial<TeamInput>, actor: string): Promise<TeamRecord | null> {
    try {
      return await this.db.prisma.$transaction((tx) => changeTeam(tx, name, t, actor), TX_OPTIONS);
    } catch (error) {
      return this.missingReference(error, t);
    }
  }

  /**
   * A team's two references — its cohort and its highest priority class — fail on their foreign keys when
   * the row went away between the caller's check and the write: says which (MissingReferenceError).
   */
  private async missingReference(error: unknown, t: Partial<TeamInput>): Promise<never> {
    if (!isForeignKeyViolation(error)) throw error;
    const ceiling = t.maxPriorityClass;
    if (typeof ceiling === 'string' && (await this.db.prisma.priorityClass.count({ where: { name: ceiling } })) === 0) {
      throw new MissingReferenceError('maxPriorityClass', ceiling);
    }
    throw new MissingReferenceError('cohort', String(t.cohort));
  }

  async list(names?: readonly string[]): Promise<TeamRecord[]> {
    const rows = await this.db.prisma.team.findMany({ ...(names ? { where: { name: { in: [...names] } } } : {}), select: TEAM_SELECT, orderBy: { name: 'asc' } });
    return rows.map(teamRecord);
  }

  /** Every team's own submission limits (null where it has none: the configured default applies). */
  async limits(): Promise<TeamLimitsRecord[]> {
    const rows = await this.db.prisma.team.findMany({ select: { name: true, maxPendingJobs: true, submissionsPerSecond: true, podPolicy: true, namespaces: true }, orderBy: { name: 'asc' } });
    return rows.map((r) => ({ ...r, podPolicy: podPolicyOf(r.podPolicy) }));
  }

  async get(name: string): Promise<TeamRecord | null> {
    const row = await this.db.prisma.team.findUnique({ where: { name }, select: TEAM_SELECT });
    return row === null ? null : teamRecord(row);
  }

  /** Names among `names` that are not teams. */
  async missing(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const found = await this.db.prisma.team.findMany({ where: { name: { in: [...names] } }, select: { name: true } });
    const known = new Set(found.map((t) => t.name));
    return names.filter((n) => !known.has(n));
  }

  async quotasOf(teams: readonly string[]): Promise<QuotaRecord[]> {
    return this.db.prisma.quota.findMany({ where: { team: { in: [...teams] } }, select: QUOTA_SELECT, orderBy: [{ team: 'asc' }, { flavor: 'asc' }] });
  }

  /**
   * Deletes a team that nothing uses any more (no unfinished job, quota, budget or pending side effect of its
   * jobs), with its finished jobs (their events stay, and the usage ledger keeps its accelerator-hours and
   * cost), takes it off every token (revoking member/executor tokens left without a team), and writes a
   * team.deleted event — in one transaction. The team row is locked
   * first, so a job, quota or budget written for it meanwhile either commits before the check (and is seen)
   * or fails on the foreign key after the delete.
   */
  async delete(name: string, actor: string): Promise<Deletion<TeamUse>> {
    try {
      return await this.deleteOnce(name, actor);
    } catch (error) {
      // Defence in depth: a job the lock did not hold back makes the team row undeletable (foreign key);
      // the second pass sees it and answers in-use instead of failing.
      if (isForeignKeyViolation(error)) return this.deleteOnce(name, actor);
      throw error;
    }
  }

  private async deleteOnce(name: string, actor: string): Promise<Deletion<TeamUse>> {
    return this.db.prisma.$transaction(async (tx): Promise<Deletion<TeamUse>> => {
      if (!(await lockTenancyRow(tx, 'teams', name))) return { outcome: 'missing' };
      const use = await teamUse(tx, name);
      if (teamInUse(use)) return { outcome: 'in-use', use };
      const jobs = await tx.job.deleteMany({ where: { team: name, state: { in: [...FINISHED] } } });
      await tx.team.delete({ where: { name } });
      // Tokens lose the team (a team of that name made later is someone else's); a member or executor
      // token left without any team is revoked. One statement (array_remove has no Prisma form), so two
      // teams deleted at once never write a token's team list from stale reads.
      const tokens = await tx.$queryRaw<{ id: string; revoked: boolean }[]>`
        UPDATE api_tokens SET teams = array_remove(teams, ${name}),
          revoked_at = CASE WHEN role <> 'admin' AND teams = ARRAY[${name}]::text[] THEN COALESCE(revoked_at, now()) ELSE revoked_at END
        WHERE ${name} = ANY(teams)
        RETURNING id::text AS id, (revoked_at IS NOT NULL AND teams = '{}') AS revoked`;
      const revokedTokens = tokens.filter((t) => t.revoked).map((t) => t.id);
      const finished = jobs.count;
      const eventId = await writeTenancyEvent(
        tx,
        'team.deleted',
        name,
        actor,
        `team ${name} deleted by ${actor} (with ${finished} finished job(s); removed from ${tokens.length} token(s), ${revokedTokens.length} of them revoked)`,
        { finishedJobsDeleted: finished, tokensChanged: tokens.map((t) => t.id), tokensRevoked: revokedTokens },
      );
      return { outcome: 'deleted', eventId };
    }, TX_OPTIONS);
  }
}

/** What a team's audit events record: its settings. */
function audited(t: TeamRecord): Audited {
  const { cohort, fairShareWeight, withinTeam, reclaimWithinCohort, maxPriorityClass, maxPendingJobs, submissionsPerSecond, podPolicy, namespaces } = t;
  return { cohort, fairShareWeight, withinTeam, reclaimWithinCohort, maxPriorityClass, limits: { maxPendingJobs, submissionsPerSecond }, podPolicy, namespaces };
}

/** Locks the team, changes the fields given and writes team.updated with the true before; null when there is no such team. */
async function changeTeam(tx: Tx, name: string, t: Partial<TeamInput>, actor: string): Promise<TeamRecord | null> {
  if (!(await lockTenancyRow(tx, 'teams', name))) return null;
  const before = teamRecord(await tx.team.findUniqueOrThrow({ where: { name }, select: TEAM_SELECT }));
  const after = teamRecord(await tx.team.update({ where: { name }, data: teamData(t, before.podPolicy), select: TEAM_SELECT }));
  await auditUpsert(tx, 'team', name, actor, audited(before), audited(after));
  return after;
}

async function teamUse(tx: Tx, name: string): Promise<TeamUse> {
  const [unfinishedJobs, quotas, budgets, sideEffects] = [
    await tx.job.count({ where: { team: name, state: { notIn: [...FINISHED] } } }),
    await tx.quota.findMany({ where: { team: name }, select: { flavor: true }, orderBy: { flavor: 'asc' } }),
    await tx.budget.findMany({ where: { team: name }, select: { period: true }, orderBy: { period: 'asc' } }),
    // Outbox payloads name jobs by id (JSON): the one read Prisma's filters cannot express.
    await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox o WHERE o.status <> 'done'
      AND (o.payload->>'jobId') IN (SELECT id::text FROM jobs WHERE team = ${name})`,
  ];
  return { unfinishedJobs, quotas: quotas.map((q) => q.flavor), budgets: budgets.map((b) => b.period), pendingSideEffects: sideEffects[0]?.n ?? 0 };
}
