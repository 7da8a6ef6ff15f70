import type { Prisma } from '../generated/prisma/client.js';
import { writeTenancyEvent, type Tx } from './prisma-helpers.js';

/** A tenancy object as the audit trail records it: its settings, without timestamps or derived fields. */
export type Audited = Record<string, unknown>;

/** The fields whose values differ, as `field: before → after` (JSON), for the event's message. */
function differences(before: Audited, after: Audited): string[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return fields
    .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))
    .map((f) => `${f}: ${JSON.stringify(before[f]) ?? 'none'} → ${JSON.stringify(after[f]) ?? 'none'}`);
}

/**
 * Writes the audit event of a created or changed tenancy object (`<object>.created` with before null, or
 * `<object>.updated` with the true before: the row as locked in the same transaction), and returns its id.
 * Flavors, cohorts and nodes have no team (admins read them); a team's events carry the team.
 */
export async function auditUpsert(
  tx: Tx,
  object: 'flavor' | 'cohort' | 'team' | 'node' | 'priorityClass',
  name: string,
  actor: string,
  before: Audited | null,
  after: Audited,
): Promise<string> {
  const team = object === 'team' ? name : null;
  const message =
    before === null
      ? `${object} ${name} created by ${actor}`
      : `${object} ${name} changed by ${actor}: ${differences(before, after).join('; ') || 'no change'}`;
  const data = { [object]: name, before, after } as unknown as Prisma.InputJsonValue;
  return writeTenancyEvent(tx, before === null ? `${object}.created` : `${object}.updated`, team, actor, message, data);
}

/** Writes `<object>.deleted` with what the object was (for objects whose deletion records its settings). */
export async function auditDeletion(tx: Tx, object: 'flavor' | 'priorityClass', name: string, actor: string, before: Audited): Promise<string> {
  const data = { [object]: name, before, after: null } as unknown as Prisma.InputJsonValue;
  return writeTenancyEvent(tx, `${object}.deleted`, null, actor, `${object} ${name} deleted by ${actor}`, data);
}
