import 'reflect-metadata';
import { Config, createLogger } from '#common';
import { Database } from '#db';
import { createNestApp } from '../api-app.js';
import { createRedis } from '../infra/redis.js';
import { openApiDocument } from '../openapi.js';
import { generatedSchema } from './schema-source.js';

/** The contract's two files, as the code generates them now (paths relative to libs/api-client). */
export interface ContractFiles {
  'openapi.json': string;
  'src/schema.ts': string;
}

/**
 * The API's contract: the OpenAPI document of an API built over handles that are never opened (keys in
 * a stable order, so the same code always gives the same bytes) and its TypeScript types.
 */
export async function contractFiles(): Promise<ContractFiles> {
  const document = `${JSON.stringify(sorted(await openApiOffline()), null, 2)}\n`;
  return { 'openapi.json': document, 'src/schema.ts': await generatedSchema(document) };
}

async function openApiOffline(): Promise<unknown> {
  const config = Config.fromEnv({ QM_ADMIN_TOKEN: 'contract-generation-only', LOG_LEVEL: 'silent' });
  const logger = createLogger('silent', 'quartermaster-contract');
  const database = new Database(config.databaseUrl);
  const redis = createRedis(config.redisUrl, 1000);
  const cycles = { run: () => Promise.reject(new Error('not available while generating the contract')) };
  const app = await createNestApp(config, { config, logger, database, redis, cycles });
  try {
    return openApiDocument(app);
  } finally {
    redis.disconnect();
    await database.close();
  }
}

/** Object keys in alphabetical order, arrays as they are. */
export function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
}
