import pg from 'pg';
import { createPrismaClient } from './client.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { poolConfig } from './migrate/connection.js';
import { LinkWatchdog, destroySocket } from './link-watchdog.js';
import { inTransaction } from './repositories/db-handle.js';

export interface DatabaseOptions {
  /** Most connections of the shared pool (default 10). */
  poolSize?: number;
  /** Reported as application_name in pg_stat_activity. */
  applicationName?: string;
  /** Server-side limit per statement, ms (default: none). */
  statementTimeoutMs?: number;
  /** Most time to open a connection (TCP + start-up), ms (default: none). Not the wait for a pooled one. */
  connectTimeoutMs?: number;
  /** Server ends a session left idle inside a transaction this long, ms (default: none). */
  idleInTransactionMs?: number;
  /**
   * Client-side limit per query, ms (default: none): a query over a link that stopped answering fails
   * with "Query read timeout" instead of hanging, and its connection is not reused.
   */
  queryTimeoutMs?: number;
  /**
   * Probe Postgres this often, ms (default: never). When a probe gets no answer within the connect
   * timeout (default 1000 ms), every pooled connection is dropped: queries waiting on a black-holed link
   * fail at once instead of after the query timeout. See LinkWatchdog.
   */
  probeIntervalMs?: number;
}

/**
 * The process's handle on Postgres: one pg.Pool shared by the Prisma client (CRUD, through the
 * driver adapter) and raw SQL (scheduler hot paths). Nest-free; apps wrap it in a provider.
 */
export class Database {
  readonly pool: pg.Pool;
  readonly prisma: PrismaClient;
  private readonly clients = new Set<pg.PoolClient>();
  private readonly watchdog: LinkWatchdog | null;

  constructor(
    readonly url: string,
    options: DatabaseOptions = {},
  ) {
    this.pool = new pg.Pool({
      ...poolConfig(url),
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'quartermaster',
      keepAlive: true,
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      ...(options.idleInTransactionMs ? { idle_in_transaction_session_timeout: options.idleInTransactionMs } : {}),
      ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
      // Only the connection attempt is limited: the pool's own connectionTimeoutMillis would also limit
      // the wait for a busy pool's next free client, failing requests under load rather than outages.
      ...(options.connectTimeoutMs ? { Client: clientWithConnectTimeout(options.connectTimeoutMs) } : {}),
    });
    // A lost connection must never crash the process. pg emits 'error' on a client whose connection
    // drops; the pool listens only while the client is idle, so a checked-out client (a transaction, the
    // cycle's lock session, Prisma's) would raise an unhandled 'error'. Every client gets a listener for
    // its whole life: the failing query rejects with the error, and the pool discards the broken client
    // on release.
    this.pool.on('connect', (client) => {
      client.on('error', () => undefined);
      this.clients.add(client);
    });
    this.pool.on('remove', (client) => this.clients.delete(client));
    this.pool.on('error', () => undefined);
    this.prisma = createPrismaClient(this.pool);
    const probeTimeoutMs = options.connectTimeoutMs ?? 1000;
    this.watchdog = options.probeIntervalMs
      ? new LinkWatchdog(
          { ...poolConfig(url), application_name: `${options.applicationName ?? 'quartermaster'}-probe`, connectionTimeoutMillis: probeTimeoutMs },
          options.probeIntervalMs,
          probeTimeoutMs,
          () => this.dropConnections(),
        )
      : null;
    this.watchdog?.start();
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

  /** Drops every pooled connection now (Postgres stopped answering): what waits on one fails at once. */
  dropConnections(): void {
    for (const client of this.clients) destroySocket(client);
  }

  async close(): Promise<void> {
    this.watchdog?.stop();
    await this.prisma.$disconnect();
    await this.pool.end();
  }
}

function clientWithConnectTimeout(ms: number): typeof pg.Client {
  return class TimedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: ms });
    }
  };
}
