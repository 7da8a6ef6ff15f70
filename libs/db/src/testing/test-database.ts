import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrlFromEnv, poolConfig, withDatabase } from '../migrate/connection.js';
import { dropDatabase, ensureDatabase } from '../migrate/ensure-database.js';
import { migrateDatabase } from '../migrate/migrate-database.js';
import { readMigrations } from '../migrate/migrations-dir.js';

export interface TestDatabase {
  /** postgresql://… of the new, migrated database. */
  url: string;
  name: string;
  /** Drops the database (terminating connections still open). Idempotent. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Server to create it on (its database part is ignored). Default: DATABASE_URL or the default URL. */
  serverUrl?: string;
  /** Short tag in the name, to tell test runs apart in pg_database (a-z, 0-9, _). */
  label?: string;
  /**
   * `template` (default): clone a migrated template database (built once per migration set, then
   * `CREATE DATABASE … TEMPLATE`, a file copy: fast). `migrate`: run the migrations on an empty
   * database (what tests of the migrator itself want). `empty`: create it and nothing else.
   */
  mode?: 'template' | 'migrate' | 'empty';
}

/** Serialises template builds across processes (advisory lock on the server's `postgres` database). */
const TEMPLATE_LOCK_KEY = 0x716d2d74706cn; // "qm-tpl"

/**
 * A uniquely named database (`qm_test_<label>_<time>_<random>`), migrated, for one test file or
 * suite. Call `drop()` in afterAll.
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const label = (options.label ?? 'db').toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 20);
  const name = `qm_test_${label}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const server = options.serverUrl ?? databaseUrlFromEnv();
  const url = withDatabase(server, name);
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    await dropDatabase(url);
  };
  try {
    switch (options.mode ?? 'template') {
      case 'template':
        await cloneTemplate(server, name);
        break;
      case 'migrate':
        await migrateDatabase(url);
        break;
      case 'empty':
        await ensureDatabase(url);
        break;
    }
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { url, name, drop };
}

/**
 * `qm_template_<hash of the migrations>`: built (migrated under a temporary name, then renamed, so no
 * half-built template is ever visible) the first time a run needs it, reused after.
 */
async function cloneTemplate(server: string, name: string): Promise<void> {
  const template = await templateName();
  const admin = new pg.Client(poolConfig(withDatabase(server, 'postgres')));
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY.toString()]);
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount === 0) {
        const building = `${template}_b${randomBytes(3).toString('hex')}`;
        await migrateDatabase(withDatabase(server, building));
        await whileInUse(() => admin.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(template)}`));
      }
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY.toString()]);
    }
    await whileInUse(() => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`));
  } finally {
    await admin.end();
  }
}

async function templateName(): Promise<string> {
  const list = await readMigrations();
  const hash = createHash('sha256');
  for (const dir of list.migrationDirectories) {
    hash.update(dir.path).update('\0');
    hash.update(dir.migrationFile.content.tag === 'ok' ? dir.migrationFile.content.value : '').update('\0');
  }
  return `qm_template_${hash.digest('hex').slice(0, 16)}`;
}

const OBJECT_IN_USE = '55006';

/**
 * Retries `fn` while Postgres answers "database is being accessed by other users": a backend that
 * just closed its connection can take a moment to exit.
 */
async function whileInUse<T>(fn: () => Promise<T>, attempts = 50): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if ((error as { code?: string }).code !== OBJECT_IN_USE || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
