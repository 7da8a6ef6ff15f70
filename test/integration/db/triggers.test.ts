import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { FUNCTIONS, TRIGGERS, createTestDatabase, type TestDatabase } from '#db';

const MIGRATIONS = new URL('../../../prisma/migrations/', import.meta.url);

/** The triggers and functions schema.prisma cannot model are declared in libs/db/src/schema/triggers.ts: this is the check. */
describe('declared triggers and functions', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase({ label: 'triggers' });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('the migrated database has exactly the declared triggers, definition by definition', async () => {
    const { rows } = await client.query<{ name: string; table: string; definition: string }>(
      `SELECT tgname AS name, tgrelid::regclass::text AS table, pg_get_triggerdef(oid) AS definition
       FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`,
    );
    expect(rows).toEqual([...TRIGGERS].sort((a, b) => (a.name < b.name ? -1 : 1)).map(({ name, table, definition }) => ({ name, table, definition })));
  });

  it('and exactly the declared functions', async () => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual(FUNCTIONS.map((f) => f.name));
  });

  it('each is created by the migration it names', async () => {
    for (const t of TRIGGERS) {
      const sql = await readFile(new URL(`${t.migration}/migration.sql`, MIGRATIONS), 'utf8');
      expect({ trigger: t.name, created: sql.includes(`CREATE TRIGGER ${t.name} `) }).toEqual({ trigger: t.name, created: true });
    }
    for (const f of FUNCTIONS) {
      for (const m of f.migrations) {
        const sql = await readFile(new URL(`${m}/migration.sql`, MIGRATIONS), 'utf8');
        expect({ fn: f.name, migration: m, defined: new RegExp(`CREATE (OR REPLACE )?FUNCTION ${f.name}\\(`).test(sql) }).toEqual({ fn: f.name, migration: m, defined: true });
      }
    }
  });
});
