// `npm run db:migrate`: create the database if missing and apply prisma/migrations (offline, WASM engine).
import { databaseUrlFromEnv, redact } from '../migrate/connection.js';
import { migrateDatabase } from '../migrate/migrate-database.js';

const url = databaseUrlFromEnv();
try {
  const result = await migrateDatabase(url);
  const applied = result.applied.length === 0 ? 'already up to date' : `applied ${result.applied.join(', ')}`;
  console.log(`${redact(url)}: ${result.createdDatabase ? 'created, ' : ''}${applied}`);
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
}
