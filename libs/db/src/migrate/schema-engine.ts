/**
 * Prisma's schema engine, compiled to WebAssembly (@prisma/schema-engine-wasm), driven through the
 * node-postgres driver adapter. This replaces the native `schema-engine` binary that `prisma migrate`
 * would download: it runs offline and inside the app process.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { SchemaEngine, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { poolConfig } from './connection.js';

export type { SchemaEngine } from '@prisma/schema-engine-wasm/schema_engine_bg';

export const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

let loaded: Promise<void> | undefined;

/** The slice of the WebAssembly global used here (the project's `lib` has no DOM/WebAssembly types). */
interface WasmApi {
  instantiate(
    bytes: Uint8Array,
    imports: Record<string, Record<string, unknown>>,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
}

/**
 * The engine arms timeouts (setTimeout through wasm-bindgen) that it never clears; left as they are,
 * each keeps the process alive ~10 s after the work is done. Unref them: they still fire while the
 * process lives for other reasons.
 */
function unrefTimers(glue: Record<string, unknown>): Record<string, unknown> {
  const wrapped: Record<string, unknown> = { ...glue };
  for (const [name, fn] of Object.entries(glue)) {
    if (!name.startsWith('__wbg_setTimeout_') || typeof fn !== 'function') continue;
    wrapped[name] = (...args: unknown[]): unknown => {
      const timer: unknown = (fn as (...a: unknown[]) => unknown)(...args);
      (timer as { unref?: () => void } | undefined)?.unref?.();
      return timer;
    };
  }
  return wrapped;
}

function wasmApi(): WasmApi {
  return (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
}

/** Compiles and instantiates the WASM module once per process (module registry). */
function loadWasm(): Promise<void> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(gluePath.replace(/schema_engine_bg\.js$/, 'schema_engine_bg.wasm'));
    // The wasm-bindgen glue module is the import object of the module it glues.
    const imports = { './schema_engine_bg.js': unrefTimers({ ...bindings }) };
    const { instance } = await wasmApi().instantiate(bytes, imports);
    bindings.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
  })();
  return loaded;
}

type ConnectedAdapter = Awaited<ReturnType<PrismaPg['connect']>>;

/**
 * adapter-pg 7.10 runs a migration script by splitting it on every ';' — which cuts a plpgsql function body
 * (`CREATE FUNCTION … $$ BEGIN …; …; END $$`) into pieces. Send the script whole instead: Postgres' simple
 * query protocol takes several statements in one query (and runs them as one implicit transaction, so a
 * failing migration leaves nothing half-applied). Errors still go through the adapter's own mapping.
 */
function wholeScripts(adapter: ConnectedAdapter, pool: pg.Pool): ConnectedAdapter {
  const mapError = (adapter as unknown as { onError(error: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string): Promise<void> => {
    try {
      await pool.query(script);
    } catch (error) {
      mapError(error);
    }
  };
  return adapter;
}

/**
 * PrismaPg whose shadow database is dropped after its connections are closed: adapter-pg 7.10 drops
 * it first, which fails ("being accessed by other users") and leaves `prisma_migrate_shadow_db_*`
 * databases behind. Scripts are sent whole (wholeScripts).
 */
class ShadowSafePrismaPg extends PrismaPg {
  constructor(private readonly home: pg.Pool) {
    super(home);
  }

  override async connect(): ReturnType<PrismaPg['connect']> {
    return wholeScripts(await super.connect(), this.home);
  }

  override async connectToShadowDb(): ReturnType<PrismaPg['connectToShadowDb']> {
    const database = `qm_shadow_${randomUUID().replaceAll('-', '')}`;
    await this.home.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    const shadowPool = new pg.Pool({ ...this.home.options, database, max: 2 });
    shadowPool.on('error', () => undefined);
    const adapter = wholeScripts(await new PrismaPg(shadowPool).connect(), shadowPool);
    const release = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await release();
      await shadowPool.end();
      await this.home.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    };
    return adapter;
  }
}

export interface OpenSchemaEngine {
  engine: SchemaEngine;
  /** Engine log lines (JSON strings), for error reports. */
  logs: string[];
  close(): Promise<void>;
}

/**
 * Opens a schema engine connected to the database of `url` (which must exist). The engine creates
 * shadow databases (for `diff` from a migrations directory) on the same server, dropping them after.
 */
export async function openSchemaEngine(url: string): Promise<OpenSchemaEngine> {
  await loadWasm();
  const pool = new pg.Pool({ ...poolConfig(url), max: 4 });
  pool.on('error', () => undefined); // idle-client errors; the engine's next query reports them
  const logs: string[] = [];
  try {
    const adapter = bindMigrationAwareSqlAdapterFactory(new ShadowSafePrismaPg(pool));
    const engine = await bindings.SchemaEngine.new(
      { datamodels: undefined },
      (line: string) => {
        logs.push(line);
        if (logs.length > 200) logs.shift();
      },
      adapter,
    );
    return {
      engine,
      logs,
      close: async () => {
        engine.free();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
