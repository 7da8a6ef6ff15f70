import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';
import { upToDate, type AppliedMigration } from './applied-migrations.js';

const sql: Record<string, string> = { '20260101000000_init': 'CREATE TABLE a (id int);\n', '20260102000000_more': 'ALTER TABLE a ADD b int;\n' };
const list: MigrationList = {
  baseDir: '/m',
  lockfile: { path: 'migration_lock.toml', content: null },
  shadowDbInitScript: '',
  migrationDirectories: Object.entries(sql).map(([path, value]) => ({ path, migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value } } })),
};
const at = new Date('2026-01-03T00:00:00Z');
const row = (name: string, over: Partial<AppliedMigration> = {}): AppliedMigration => ({
  migration_name: name,
  checksum: createHash('sha256').update(sql[name] ?? name).digest('hex'),
  finished_at: at,
  rolled_back_at: null,
  ...over,
});

describe('upToDate (whether migrateDatabase may skip the schema engine)', () => {
  it('holds when every local migration was applied, finished, with its checksum, and nothing else', () => {
    expect(upToDate(list, [row('20260101000000_init'), row('20260102000000_more')])).toBe(true);
  });

  it('ignores attempts rolled back and applied again', () => {
    expect(upToDate(list, [row('20260101000000_init'), row('20260102000000_more', { finished_at: null, rolled_back_at: at }), row('20260102000000_more')])).toBe(true);
  });

  it('sends everything else to the engine: a migration not applied, a failed or unfinished one, a changed file, one applied that is not local, a missing file, no table', () => {
    expect(upToDate(list, [row('20260101000000_init')])).toBe(false);
    expect(upToDate(list, [row('20260101000000_init'), row('20260102000000_more', { finished_at: null })])).toBe(false);
    expect(upToDate(list, [row('20260101000000_init'), row('20260102000000_more', { checksum: 'f'.repeat(64) })])).toBe(false);
    expect(upToDate(list, [row('20260101000000_init'), row('20260102000000_more'), row('20260103000000_newer')])).toBe(false);
    const missing: MigrationList = { ...list, migrationDirectories: [...list.migrationDirectories, { path: '20260104000000_x', migrationFile: { path: 'migration.sql', content: { tag: 'error', value: 'missing' } } }] };
    expect(upToDate(missing, [row('20260101000000_init'), row('20260102000000_more')])).toBe(false);
    expect(upToDate(list, [])).toBe(false);
  });
});
