import type { Pool, PoolClient } from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';

/** What the repositories need from the Database: the Prisma client, and the pg pool for hot-path SQL. */
export interface DbHandle {
  readonly prisma: PrismaClient;
  readonly pool: Pool;
}

/** Runs `work` in one pg transaction (BEGIN … COMMIT, ROLLBACK on any error). */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Postgres error codes the repositories translate. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';

export function pgCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
