// Prisma CLI configuration (`prisma generate --config prisma/prisma.config.ts`).
// Migrations are not run by the Prisma CLI here: `npm run db:migrate` applies them through the WASM
// schema engine (libs/db/src/migrate), so `datasource.url` only serves CLI commands that need one.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'schema.prisma',
  migrations: { path: 'migrations' },
  datasource: {
    url: process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/quartermaster',
  },
});
