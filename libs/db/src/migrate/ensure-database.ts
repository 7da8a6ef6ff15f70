import pg from 'pg';
import { databaseName, poolConfig, redact, withDatabase } from './connection.js';

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

/**
 * Creates the database `url` points at when it does not exist (connecting to the server's `postgres`
 * database). Safe when several processes race: the loser's "already exists" is success.
 * Returns whether this call created it.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  const client = new pg.Client(poolConfig(withDatabase(url, 'postgres')));
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot connect to Postgres at ${redact(url)}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === DUPLICATE_DATABASE || code === UNIQUE_VIOLATION) return false;
      throw error;
    }
  } finally {
    await client.end();
  }
}

/** Drops the database (terminating its connections). Used by tests and tools, never by the apps. */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const client = new pg.Client(poolConfig(withDatabase(url, 'postgres')));
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
