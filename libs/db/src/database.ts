import pg from 'pg';
import { createPrismaClient } from './client.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { poolConfig } from './migrate/connection.js';
import { inTransaction } from './repositories/db-handle.js';

export interface DatabaseOptions {
  /** Most connections of the shared pool (default 10). */
  poolSize?: number;
  /** Reported as application_name in pg_stat_activity. */
  applicationName?: string;
  /** Server-side limit per statement, ms (default: none). */
  statementTimeoutMs?: number;
}

/**
 * The process's handle on Postgres: one pg.Pool shared by the Prisma client (CRUD, through the
 * driver adapter) and raw SQL (scheduler hot paths). Nest-free; apps wrap it in a provider.
 */
export class Database {
  readonly pool: pg.Pool;
  readonly prisma: PrismaClient;

  constructor(
    readonly url: string,
    options: DatabaseOptions = {},
  ) {
    this.pool = new pg.Pool({
      ...poolConfig(url),
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'quartermaster',
      ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.prisma = createPrismaClient(this.pool);
  }

  /** Runs `fn` in one transaction on one pooled connection (BEGIN … COMMIT, ROLLBACK on throw). */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }

  /** Throws unless Postgres answers within `timeoutMs` (for /readyz). */
  async ping(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`postgres did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.pool.query('SELECT 1'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.prisma.$disconnect();
    await this.pool.end();
  }
}
