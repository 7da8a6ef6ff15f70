import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

/**
 * A Prisma client over node-postgres (driver adapter; no query-engine binary). Pass a pg.Pool to share
 * connections with raw-SQL code (the pool is then not closed by `$disconnect`), or a URL for a private pool.
 */
export function createPrismaClient(urlOrPool: string | pg.Pool): PrismaClient {
  const adapter = typeof urlOrPool === 'string' ? new PrismaPg({ connectionString: urlOrPool }) : new PrismaPg(urlOrPool);
  return new PrismaClient({ adapter });
}
