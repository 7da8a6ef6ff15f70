import type { PoolConfig } from 'pg';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/quartermaster';

/** The database URL from the environment, or the documented default. */
export function databaseUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env['DATABASE_URL'];
  return url === undefined || url === '' ? DEFAULT_DATABASE_URL : url;
}

/** The database name a postgres URL points at (throws on a URL without one). */
export function databaseName(url: string): string {
  const parsed = parseUrl(url);
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (name === '') throw new Error(`DATABASE_URL has no database name: ${redact(url)}`);
  return name;
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = parseUrl(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * A pg config with discrete fields (no `connectionString`): pg lets a connection string override
 * `database`, and the schema engine's shadow database relies on overriding `database`.
 */
export function poolConfig(url: string): PoolConfig {
  const parsed = parseUrl(url);
  const sslmode = parsed.searchParams.get('sslmode');
  const config: PoolConfig = {
    host: decodeURIComponent(parsed.hostname) || '127.0.0.1',
    port: parsed.port === '' ? 5432 : Number(parsed.port),
    user: decodeURIComponent(parsed.username) || 'postgres',
    database: databaseName(url),
  };
  if (parsed.password !== '') config.password = decodeURIComponent(parsed.password);
  if (sslmode === 'require' || sslmode === 'verify-full' || sslmode === 'verify-ca') {
    config.ssl = { rejectUnauthorized: sslmode !== 'require' };
  }
  const schema = parsed.searchParams.get('schema');
  if (schema !== null && schema !== 'public') {
    throw new Error(`only the public schema is supported, DATABASE_URL asks for schema=${schema}`);
  }
  return config;
}

/** The URL with its password replaced by `***`, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`DATABASE_URL is not a URL: ${redact(url)}`);
  }
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new Error(`DATABASE_URL must be postgresql://…, got ${parsed.protocol}`);
  }
  return parsed;
}
