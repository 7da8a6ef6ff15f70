import pg from 'pg';
import { readAppliedMigrations, upToDate } from './applied-migrations.js';
import { poolConfig, redact } from './connection.js';
import { ensureDatabase } from './ensure-database.js';
import { migrationsDir as defaultMigrationsDir, readMigrations } from './migrations-dir.js';
import { NO_FILTER, openSchemaEngine } from './schema-engine.js';

/**
 * Key of the session-level advisory lock that serialises migration runs on one database
 * (ASCII "qm-migr" as an integer). Prisma's engine takes its own lock too; ours also covers the
 * engine's start-up reads of `_prisma_migrations`.
 */
export const MIGRATION_LOCK_KEY = 0x716d2d6d696772n;

export interface MigrateOptions {
  /** Defaults to the repository's prisma/migrations. */
  migrationsDir?: string;
  /** Create the database when missing (default true). */
  createDatabase?: boolean;
}

export interface MigrateResult {
  createdDatabase: boolean;
  /** Migrations applied by this call (empty when the database was up to date). */
  applied: string[];
}

/**
 * Brings the database at `url` up to date with prisma/migrations, exactly as `prisma migrate deploy`
 * would (same SQL, same `_prisma_migrations` records), through the WASM schema engine — not started when
 * the database has applied exactly these migrations already (applied-migrations.ts). Holds a Postgres
 * advisory lock for the whole run, so replicas starting together apply each migration once.
 */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const createdDatabase = options.createDatabase === false ? false : await ensureDatabase(url);
  const migrationsList = await readMigrations(options.migrationsDir ?? defaultMigrationsDir());
  if (migrationsList.migrationDirectories.length === 0) {
    throw new Error(`no migrations in ${migrationsList.baseDir}`);
  }
  const lock = new pg.Client(poolConfig(url));
  lock.on('error', () => undefined); // a dropped connection surfaces as the failing query's error
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    // Every process start lands here: when the database has applied exactly these migrations, the engine is not started.
    if (upToDate(migrationsList, await readAppliedMigrations(lock))) return { createdDatabase, applied: [] };
    const open = await openSchemaEngine(url);
    try {
      const output = await open.engine.applyMigrations({ migrationsList, filters: NO_FILTER });
      return { createdDatabase, applied: output.appliedMigrationNames };
    } catch (error) {
      throw new Error(`migrating ${redact(url)} failed: ${(error as Error).message}`, { cause: error });
    } finally {
      await open.close();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    await lock.end();
  }
}
