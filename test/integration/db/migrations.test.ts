import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import {
  createTestDatabase,
  MIGRATED_SCHEMA_FILE,
  databaseUrlFromEnv,
  diffMigrationsToSchema,
  dropDatabase,
  migrateDatabase,
  schemaCreationScript,
  type TestDatabase,
} from '#db';
import { readCatalog } from './catalog.js';

// Databases are created and migrated per test on a shared, sometimes busy server: no 5 s default.
jest.setTimeout(60_000);

const created: TestDatabase[] = [];
async function freshDatabase(label: string, migrate = true): Promise<TestDatabase> {
  const db = await createTestDatabase({ label, mode: migrate ? 'migrate' : 'empty' });
  created.push(db);
  return db;
}

afterAll(async () => {
  await Promise.all(created.map((db) => db.drop()));
});

const MIGRATIONS = join(process.cwd(), 'prisma', 'migrations');

async function migrationNames(): Promise<string[]> {
  const entries = await readdir(MIGRATIONS, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migrations', () => {
  it('apply to an empty database and are recorded as `prisma migrate deploy` records them', async () => {
    const db = await freshDatabase('mig_apply');
    const rows = await query<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      db.url,
      'SELECT migration_name, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(await migrationNames());
    for (const row of rows) {
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
    }
    const storage = await query<{ reloptions: string[] | null }>(db.url, `SELECT reloptions FROM pg_class WHERE relname = 'jobs'`);
    expect(storage[0]?.reloptions).toEqual(['fillfactor=80']); // the hand-written migration ran too
    // So did the ledger's triggers, plpgsql bodies (with their ';') included.
    const triggers = await query<{ tgname: string }>(db.url, 'SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname');
    expect(triggers.map((t) => t.tgname)).toEqual([
      'allocations_snapshot_update', 'cohorts_snapshot',
      'flavors_price_history', 'flavors_snapshot', 'job_transitions_usage', 'jobs_snapshot_delete', 'jobs_snapshot_insert',
      'jobs_snapshot_update', 'nodes_snapshot_delete', 'nodes_snapshot_insert', 'nodes_snapshot_update', 'quotas_snapshot',
      'teams_snapshot',
    ]);
    const again = await migrateDatabase(db.url);
    expect(again).toEqual({ createdDatabase: false, applied: [] });
  });

  it('produce exactly the schema of schema.prisma (same catalogs as a database built from it directly)', async () => {
    const migrated = await freshDatabase('mig_from_sql');
    const direct = await freshDatabase('mig_from_schema', false);
    const script = await schemaCreationScript({ url: direct.url });
    await query(direct.url, script);

    const fromMigrations = await readCatalog(migrated.url);
    const fromSchema = await readCatalog(direct.url);
    expect(fromMigrations).toEqual(fromSchema);

    // Not vacuous: every model is a table, with its hot-path indexes.
    const tables = new Set(fromMigrations.columns.map((c) => c.split('.')[0]));
    expect([...tables].sort()).toEqual([
      'allocations', 'api_tokens', 'budget_alerts', 'budgets', 'cohorts', 'events', 'flavor_prices', 'flavors', 'fleet_history', 'idempotency_keys',
      'job_transitions', 'jobs', 'kube_cluster', 'kube_namespaces', 'nodes', 'outbox', 'priority_classes', 'quotas', 'scheduler_cycles', 'scheduler_leases', 'snapshot_changes', 'teams',
      'usage_segments',
    ]);
    const indexes = fromMigrations.indexes.join('\n');
    expect(indexes).toContain('ON public.jobs USING btree (state, submitted_at, id)');
    expect(indexes).toContain('ON public.jobs USING btree (team, state, submitted_at)');
    expect(indexes).toContain('ON public.jobs USING btree (submitted_at DESC, id DESC)');
    expect(indexes).toContain('ON public.allocations USING btree (node)');
    expect(indexes).toContain('ON public.events USING btree (job_id, id)');
    expect(indexes).toContain('UNIQUE INDEX outbox_dedupe_key_key');
    expect(fromMigrations.enums).toContain('job_state(PENDING,ADMITTED,BINDING,RUNNING,SUCCEEDED,FAILED,CANCELLED,PREEMPTED)');
  });

  it('have no drift: schema.prisma equals the schema the latest migration ends at', async () => {
    expect(await diffMigrationsToSchema({ url: databaseUrlFromEnv() })).toBe('');
  });

  it('keep one schema snapshot, at prisma/migrations, and no copy per migration', async () => {
    const snapshot = await readFile(join(MIGRATIONS, MIGRATED_SCHEMA_FILE), 'utf8');
    expect(snapshot).toContain('model Job {');
    const copies = (await migrationNames()).filter((name) => existsSync(join(MIGRATIONS, name, 'schema.prisma')));
    expect(copies).toEqual([]);
  });

  it('two replicas migrating a missing database at the same time both succeed, applying each migration once', async () => {
    const target = await freshDatabase('mig_race', false);
    await dropDatabase(target.url); // start from "missing": both calls race to create it too
    const [a, b] = await Promise.all([migrateDatabase(target.url), migrateDatabase(target.url)]);
    const names = await migrationNames();
    expect([...a.applied, ...b.applied].sort()).toEqual(names);
    expect([a.createdDatabase, b.createdDatabase].filter(Boolean)).toHaveLength(1);
    const rows = await query<{ n: string }>(target.url, 'SELECT count(*)::text AS n FROM _prisma_migrations');
    expect(rows[0]?.n).toBe(String(names.length));
  });

  it('createTestDatabase clones a migrated template: same catalogs and history as a migrated database', async () => {
    const migrated = await freshDatabase('mig_ref');
    const cloned = await createTestDatabase({ label: 'mig_clone' });
    created.push(cloned);
    expect(await readCatalog(cloned.url)).toEqual(await readCatalog(migrated.url));
    const history = await query<{ migration_name: string }>(cloned.url, 'SELECT migration_name FROM _prisma_migrations ORDER BY 1');
    expect(history.map((r) => r.migration_name)).toEqual(await migrationNames());
    expect(await migrateDatabase(cloned.url)).toEqual({ createdDatabase: false, applied: [] });
  });

  it('rejects a non-postgres URL with a clear error', async () => {
    await expect(migrateDatabase('mysql://root@127.0.0.1/x')).rejects.toThrow('DATABASE_URL must be postgresql://');
  });
});

describe('migrateDatabase errors', () => {
  it('says which server it cannot reach', async () => {
    await expect(migrateDatabase('postgresql://postgres@127.0.0.1:1/qm_nowhere')).rejects.toThrow(
      'cannot connect to Postgres at postgresql://postgres@127.0.0.1:1/qm_nowhere',
    );
  });
});
