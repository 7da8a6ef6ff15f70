import pg from 'pg';

/** A comparable description of the public schema, read from the Postgres catalogs (no Prisma involved). */
export interface Catalog {
  columns: string[];
  indexes: string[];
  constraints: string[];
  enums: string[];
}

export async function readCatalog(url: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query<{ line: string }>(`
      SELECT format('%s.%s %s %s null=%s default=%s', table_name, column_name, data_type, udt_name,
                    is_nullable, coalesce(column_default, '-')) AS line
      FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
      ORDER BY table_name, column_name`);
    const indexes = await client.query<{ line: string }>(`
      SELECT indexdef AS line FROM pg_indexes
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`);
    const constraints = await client.query<{ line: string }>(`
      SELECT format('%s %s %s', conrelid::regclass::text, conname, pg_get_constraintdef(oid)) AS line
      FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations'
      ORDER BY conrelid::regclass::text, conname`);
    const enums = await client.query<{ line: string }>(`
      SELECT format('%s(%s)', t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)) AS line
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace = 'public'::regnamespace
      GROUP BY t.typname ORDER BY t.typname`);
    return {
      columns: columns.rows.map((r) => r.line),
      indexes: indexes.rows.map((r) => r.line),
      constraints: constraints.rows.map((r) => r.line),
      enums: enums.rows.map((r) => r.line),
    };
  } finally {
    await client.end();
  }
}
