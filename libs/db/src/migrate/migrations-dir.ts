import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';

/**
 * The repository's `prisma/` directory: found by walking up from this module (works from the TS
 * sources, from dist/ and from an image that copies prisma/ next to dist/). `QM_PRISMA_DIR` overrides.
 */
export function findPrismaDir(start: string = dirname(fileURLToPath(import.meta.url))): string {
  const override = process.env['QM_PRISMA_DIR'];
  if (override !== undefined && override !== '') return resolve(override);
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'prisma', 'schema.prisma'))) return join(dir, 'prisma');
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no prisma/schema.prisma above ${start} (set QM_PRISMA_DIR)`);
    dir = parent;
  }
}

export function migrationsDir(prismaDir: string = findPrismaDir()): string {
  return join(prismaDir, 'migrations');
}

/** Reads prisma/migrations into the engine's MigrationList (directories sorted by name). */
export async function readMigrations(dir: string = migrationsDir()): Promise<MigrationList> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = join(dir, 'migration_lock.toml');
  const lockContent = existsSync(lockPath) ? await readFile(lockPath, 'utf8') : null;
  const migrationDirectories = await Promise.all(
    names.map(async (name) => {
      const file = join(dir, name, 'migration.sql');
      const content = existsSync(file)
        ? { tag: 'ok' as const, value: await readFile(file, 'utf8') }
        : { tag: 'error' as const, value: `missing ${file}` };
      return { path: name, migrationFile: { path: 'migration.sql', content } };
    }),
  );
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: lockContent },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}
