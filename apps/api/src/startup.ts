// Start-up checks of the API's dependencies, free of NestJS: `npm start` (apps/server) prepares Postgres with them, starts
// the scheduler, and only then loads the API (NestJS, Fastify, Swagger, class-validator: seconds of module
// loading that the scheduler's first cycle need not wait for).
import { type Config, redactUrl } from '#common';
import { Database, migrateDatabase } from '#db';

/** A dependency that could not be reached at start-up; the message is one line with the fix. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Applies the migrations (creating the database if missing); StartupError with one clear line when it cannot. */
export async function prepareDatabase(config: Config): Promise<void> {
  try {
    await migrateDatabase(config.databaseUrl);
  } catch (error) {
    throw new StartupError(`cannot prepare Postgres at ${redactUrl(config.databaseUrl)} (${startupReason(error)}): start Postgres or fix DATABASE_URL`);
  }
}

/** The API's handle on Postgres (pool size and timeouts of the configuration). */
export function apiDatabase(config: Config): Database {
  return new Database(config.databaseUrl, { poolSize: config.dbPoolSize, applicationName: 'quartermaster-api', ...config.dbTimeouts });
}

/** The first line of an error, with its code when the message lacks it. */
export function startupReason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    // Drop a leading "cannot connect to … at <url>:" that repeats what the caller says.
    const msg = (error.message.split('\n')[0] ?? '').replace(/^cannot connect to [^:]+ at \S+: /, '');
    return typeof code === 'string' && !msg.includes(code) ? `${code}: ${msg}` : msg || error.name;
  }
  return String(error);
}
