import { Prisma } from '../generated/prisma/client.js';
import { pgCode, PG_FOREIGN_KEY_VIOLATION } from './db-handle.js';

/** The client an interactive transaction hands its callback. */
export type Tx = Prisma.TransactionClient;

/**
 * Options of every interactive transaction of the CRUD repositories. Prisma's defaults (2 s to get a
 * connection, 5 s for the whole transaction) would fail requests on a busy machine where the pg
 * transactions they replace waited; the pool's own limits and the query timeout still apply.
 */
export const TX_OPTIONS = { maxWait: 60_000, timeout: 60_000 } as const;

/** A foreign key refused the write (pg 23503, Prisma P2003): a referenced row does not exist (any more). */
export function isForeignKeyViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === 'P2003';
  return pgCode(error) === PG_FOREIGN_KEY_VIOLATION;
}

/** Prisma's "record to update/delete does not exist" (P2025). */
export function isRecordMissing(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}

/**
 * Row locks. Prisma's query API has no `SELECT … FOR UPDATE`; a full lock (not the weaker one an UPDATE
 * takes) is what makes a concurrent insert of a referencing row (a team joining a cohort, a job of a team,
 * an allocation on a node) wait for the deletion and then fail on its foreign key instead of slipping in
 * between the check and the delete. True when the row exists.
 */
export async function lockTenancyRow(tx: Tx, table: 'teams' | 'cohorts' | 'nodes' | 'flavors' | 'priority_classes', name: string): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM ${Prisma.raw(table)} WHERE name = ${name} FOR UPDATE`;
  return rows.length === 1;
}

export async function lockQuotaRow(tx: Tx, team: string, flavor: string): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM quotas WHERE team = ${team} AND flavor = ${flavor} FOR UPDATE`;
  return rows.length === 1;
}

/** Writes one audit event (who did what to which team) and returns its id. */
export async function writeTenancyEvent(tx: Tx, kind: string, team: string | null, actor: string, message: string, data: Prisma.InputJsonValue): Promise<string> {
  const event = await tx.event.create({ data: { kind, team, actor, message, data }, select: { id: true } });
  return event.id.toString();
}
