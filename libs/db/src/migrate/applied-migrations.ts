import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';

/** A row of `_prisma_migrations`, as far as deciding whether there is anything to do. */
export interface AppliedMigration {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

const UNDEFINED_TABLE = '42P01';

/**
 * Whether `prisma/migrations` is exactly what the database has applied: every local migration applied,
 * finished and not rolled back, with the checksum (SHA-256 of its migration.sql) it was applied with; no
 * failed or unfinished attempt; nothing applied that is not local. Then the schema engine would apply
 * nothing, and migrateDatabase skips it: compiling and starting the WASM engine is ~0.3–0.5 s of every
 * process start. Anything else — including a doubt — goes to the engine, which decides as
 * `prisma migrate deploy` does.
 */
export function upToDate(list: MigrationList, applied: readonly AppliedMigration[]): boolean {
  const local = new Map<string, string>();
  for (const dir of list.migrationDirectories) {
    if (dir.migrationFile.content.tag !== 'ok') return false;
    local.set(dir.path, createHash('sha256').update(dir.migrationFile.content.value).digest('hex'));
  }
  const done = new Set<string>();
  for (const row of applied) {
    if (row.rolled_back_at !== null) continue;
    if (row.finished_at === null) return false; // failed or in progress: the engine reports it
    if (local.get(row.migration_name) !== row.checksum) return false; // not local, or changed since
    done.add(row.migration_name);
  }
  return done.size === local.size;
}

/** The rows of `_prisma_migrations` (none when the table does not exist yet). */
export async function readAppliedMigrations(client: pg.Client): Promise<AppliedMigration[]> {
  try {
    const { rows } = await client.query<AppliedMigration>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations');
    return rows;
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return [];
    throw error;
  }
}
