import pg from 'pg';
import { databaseName, poolConfig, redact, withDatabase } from './connection.js';

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

const INVALID_CATALOG_NAME = '3D000';

/**
 * Creates the database `url` points at when it does not exist. Safe when several processes race: the
 * loser's "already exists" is success. Connects to the target first, and to the server's `postgres`
 * database only when the target is missing (so a role that may not create databases, or a server
 * without a `postgres` database, works as long as the target exists). Returns whether it created it.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  const probe = new pg.Client(poolConfig(url));
  try {
    await probe.connect();
    return false;
  } catch (error) {
    if ((error as { code?: string }).code !== INVALID_CATALOG_NAME) {
      throw new Error(`cannot connect to Postgres at ${redact(url)}: ${(error as Error).message}`, { cause: error });
    }
  } finally {
    await probe.end().catch(() => undefined);
  }
  const client = new pg.Client(poolConfig(withDatabase(url, 'postgres')));
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`database ${name} does not exist and the server's postgres database is unreachable to create it: ${(error as Error).message}`, { cause: error });
  }
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === DUPLICATE_DATABASE || code === UNIQUE_VIOLATION) return false;
    throw new Error(`cannot create database ${name} at ${redact(url)}: ${(error as Error).message}`, { cause: error });
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
