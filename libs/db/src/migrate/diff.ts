import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withDatabase } from './connection.js';
import { findPrismaDir, migrationsDir, readMigrations } from './migrations-dir.js';
import { NO_FILTER, openSchemaEngine } from './schema-engine.js';

export interface DiffOptions {
  /** Postgres server the engine connects to (its `postgres` database; nothing is written there). */
  url: string;
  prismaDir?: string;
}

/**
 * The one rolling snapshot of the schema the migrations end at, in prisma/migrations (`db:diff` rewrites it
 * with each migration it writes). Migrations carry no copy of their own.
 */
export const MIGRATED_SCHEMA_FILE = 'schema.snapshot.prisma';

/**
 * The schema at the end of prisma/migrations (the snapshot); `null` when there is no migration yet.
 *
 * Why a copy rather than replaying migrations into a shadow database: the WASM engine cannot
 * introspect a live Postgres (`Column type 'char'`), and a shadow replay needs exactly that.
 * The integration tests check that the copy is faithful (a database migrated from the SQL and one
 * created from the copy have identical catalogs).
 */
export async function migratedSchema(prismaDir: string = findPrismaDir()): Promise<string | null> {
  const list = await readMigrations(migrationsDir(prismaDir));
  const file = join(list.baseDir, MIGRATED_SCHEMA_FILE);
  if (existsSync(file)) return readFile(file, 'utf8');
  if (list.migrationDirectories.length > 0) throw new Error(`${list.baseDir} has migrations but no ${MIGRATED_SCHEMA_FILE}: the schema they end at`);
  return null;
}

/**
 * SQL that takes a database from the end of prisma/migrations to prisma/schema.prisma.
 * Empty string = no drift.
 */
export async function diffMigrationsToSchema(options: DiffOptions): Promise<string> {
  const prismaDir = options.prismaDir ?? findPrismaDir();
  const schema = await readFile(join(prismaDir, 'schema.prisma'), 'utf8');
  const from = await migratedSchema(prismaDir);
  return normaliseScript(await diffSchemas(options.url, from, schema));
}

/** SQL that takes a database from schema `from` (`null` = empty database) to schema `to`, as the engine writes it. */
export async function diffSchemas(url: string, from: string | null, to: string): Promise<string> {
  const open = await openSchemaEngine(withDatabase(url, 'postgres'));
  try {
    const result = await open.engine.diff({
      from: from === null ? { tag: 'empty' } : { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: from }] },
      to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: to }] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    return result.stdout ?? '';
  } finally {
    await open.close();
  }
}

/** SQL that creates prisma/schema.prisma from an empty database (what the `init` migration holds). */
export async function schemaCreationScript(options: DiffOptions): Promise<string> {
  const prismaDir = options.prismaDir ?? findPrismaDir();
  const schema = await readFile(join(prismaDir, 'schema.prisma'), 'utf8');
  const open = await openSchemaEngine(withDatabase(options.url, 'postgres'));
  try {
    const result = await open.engine.diff({
      from: { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: schema }] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    return result.stdout ?? '';
  } finally {
    await open.close();
  }
}

/** The engine answers "-- This is an empty migration." for no changes. */
function normaliseScript(script: string): string {
  const meaningful = script
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('--'));
  return meaningful.length === 0 ? '' : script;
}
