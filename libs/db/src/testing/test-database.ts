import { randomBytes } from 'node:crypto';
import { databaseUrlFromEnv, withDatabase } from '../migrate/connection.js';
import { dropDatabase, ensureDatabase } from '../migrate/ensure-database.js';
import { migrateDatabase } from '../migrate/migrate-database.js';

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
  /** Apply prisma/migrations (default true). */
  migrate?: boolean;
}

/**
 * A uniquely named database (`qm_test_<label>_<time>_<random>`), created and migrated, for one test
 * file or suite. Call `drop()` in afterAll.
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const label = (options.label ?? 'db').toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 20);
  const name = `qm_test_${label}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const url = withDatabase(options.serverUrl ?? databaseUrlFromEnv(), name);
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    await dropDatabase(url);
  };
  try {
    if (options.migrate === false) await ensureDatabase(url);
    else await migrateDatabase(url);
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { url, name, drop };
}
