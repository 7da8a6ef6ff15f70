// The only public door of libs/db: Prisma client and Database handle, migrations, scheduler hot paths.
export { Prisma, PrismaClient, $Enums as DbEnums } from './generated/prisma/client.js';
export { createPrismaClient } from './client.js';
export { Database, type DatabaseOptions } from './database.js';
export { UUID } from './uuid.js';
export { GroupBatcher, type GroupBatcherOptions } from './group-batcher.js';
export { flavorKindFromDb, flavorKindToDb, jobKindFromDb, jobKindToDb } from './enums.js';
export { DEFAULT_DATABASE_URL, databaseUrlFromEnv, redact as redactDatabaseUrl } from './migrate/connection.js';
export { dropDatabase, ensureDatabase } from './migrate/ensure-database.js';
export { MIGRATION_LOCK_KEY, migrateDatabase, type MigrateOptions, type MigrateResult } from './migrate/migrate-database.js';
export { createTestDatabase, type TestDatabase, type TestDatabaseOptions } from './testing/test-database.js';
export {
  MIGRATED_SCHEMA_FILE,
  diffMigrationsToSchema,
  diffSchemas,
  migratedSchema,
  schemaCreationScript,
  type DiffOptions,
} from './migrate/diff.js';
// Repositories over the Database for the API (owned by the API engineer).
export * from './repositories/index.js';
export * from './accounting/index.js';
export * from './history/index.js';
export * from './lifecycle/index.js';
export type { SqlHandle } from './scheduling/sql-handle.js';
export { FencingError, InvalidCycleResultError } from './scheduling/errors.js';
export { acquireOrRenewLease, readLease, releaseLease, type LeaseState } from './scheduling/lease.js';
export { loadSnapshot, loadSnapshotWithVersions, type SnapshotWithVersions } from './scheduling/load-snapshot.js';
export { commitCycle, nextCycleNumber, type CommitCycleInput, type CommitCycleOutcome } from './scheduling/commit-cycle.js';
export { CHANGE_LOG_RETENTION_MS, CycleSession, type CycleRead, type ReadKind, type SnapshotCache } from './scheduling/cycle-session.js';
export { SnapshotState } from './scheduling/snapshot-state.js';
export { CYCLE_LOCK_KEY, CycleLock } from './scheduling/cycle-lock.js';
export { assertFencing } from './scheduling/fencing.js';
export { OutboxRepository, type OutboxRecord, type OutboxRef } from './scheduling/outbox.repository.js';
export { GANG_TIMEOUT_REASON, countActiveJobs, releaseEndedAllocations, requeueStuckAdmissions, type StuckAdmissionsInput } from './scheduling/reconcile.js';
export * from './kubernetes/index.js';
export { pruneHistory, type PruneOptions, type PruneResult } from './scheduling/prune-history.js';
export { FUNCTIONS, TRIGGERS, type DeclaredFunction, type DeclaredTrigger } from './schema/triggers.js';
