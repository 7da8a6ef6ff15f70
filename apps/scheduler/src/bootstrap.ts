import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Config, createLogger, redactUrl } from '#common';
import { runBudgetedCycle } from '#core';
import { Database, migrateDatabase } from '#db';
import {
  PgCycleLock,
  PgCycleStore,
  PgLeaseStore,
  PgOutboxStore,
  PgReconcileStore,
  SchedulerMetrics,
  createSchedulerProcess,
  createWorkerProcess,
  historyRetentionOf,
  schedulerOptionsOf,
  standaloneHandlers,
  type AnySideEffectHandler,
  type FailpointHook,
  type LeaseStore,
  type SchedulerProcess,
  type SchedulerSettings,
} from '#scheduling';
import type { HealthServer } from './health-server.js';
import type { ProcessStatus } from './process-status.js';

/** Handlers of the side-effect catalogue for this process (Kubernetes mode: libs/kube provides them). */
export type HandlerFactory = (config: Config, database: Database, logger: Logger) => Promise<AnySideEffectHandler[]> | AnySideEffectHandler[];

export interface RoleOptions {
  /** Share handles with the rest of a composed process; created (and closed) when absent. */
  database?: Database;
  logger?: Logger;
  /** Serve /healthz, /readyz, /metrics on this port (default: the settings' port for the role; null = no server). */
  port?: number | null;
  /** Kubernetes mode (config.kubeconfig set) needs these; standalone mode acknowledges every entry. */
  kubernetesHandlers?: HandlerFactory;
  migrate?: boolean;
  /** Fault injection for tests (QM_TEST_FAILPOINTS, parsed by the entry point). */
  failpoint?: FailpointHook;
  /**
   * More routes on this process's HTTP server, registered before it listens (Kubernetes mode: the
   * scheduler extender, see kubernetes-mode.ts). Ignored when `port` is null.
   */
  routes?: (host: FastifyInstance) => void;
  /**
   * Wraps the Postgres lease the scheduler elects itself with (Kubernetes mode with
   * QM_KUBE_LEADER_LEASE: a coordination.k8s.io Lease gates it, see GatedLeaseStore).
   */
  leases?: (postgres: LeaseStore) => LeaseStore;
}

export interface RunningRole {
  /** Bound http URL of the health server, or null. */
  url: string | null;
  scheduler: SchedulerProcess | null;
  stop(): Promise<void>;
}

/**
 * Starts the scheduler (`scheduler`), side-effect workers (`worker`), or both in one process. Every
 * failure to reach a dependency or to assemble the handler catalogue throws before anything runs; an HTTP
 * server that cannot start (its port taken) stops what had started and throws.
 */
export async function startRole(role: 'scheduler' | 'worker' | 'both', config: Config, settings: SchedulerSettings, options: RoleOptions = {}): Promise<RunningRole> {
  const logger = (options.logger ?? createLogger(config.logLevel, `quartermaster-${role}`)).child({ component: role });
  if (options.migrate !== false) await migrateDatabase(config.databaseUrl);
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? new Database(config.databaseUrl, { poolSize: config.dbPoolSize, applicationName: `quartermaster-${role}`, ...config.dbTimeouts });
  await database.ping(Math.max(config.readyTimeoutMs, 2000));
  const redis = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  await redis.connect().catch((error: unknown) => {
    throw new Error(`cannot reach Redis at ${redactUrl(config.redisUrl)} (${(error as Error).message}): start Redis or fix REDIS_URL`);
  });

  const metrics = new SchedulerMetrics();
  const outbox = new PgOutboxStore(database.pool);
  let scheduler: SchedulerProcess | null = null;
  if (role !== 'worker') {
    const lock = new PgCycleLock(database.pool);
    scheduler = createSchedulerProcess({
      stores: {
        cycles: new PgCycleStore(database, lock, schedulerOptionsOf(settings), {
          fullReloadMs: settings.snapshotFullReloadMs,
          logger,
          onRead: (read) => metrics.onSnapshotRead(read),
        }),
        leases: options.leases ? options.leases(new PgLeaseStore(database)) : new PgLeaseStore(database),
        outbox,
        reconcile: new PgReconcileStore(database.pool, lock, historyRetentionOf(settings)),
      },
      settings,
      redisUrl: config.redisUrl,
      logger,
      metrics,
      schedule: runBudgetedCycle,
      ...(options.failpoint ? { failpoint: options.failpoint } : {}),
    });
  }
  const worker =
    role === 'scheduler'
      ? null
      : createWorkerProcess({ outbox, handlers: await handlersFor(config, database, logger, options), settings, redisUrl: config.redisUrl, logger, metrics });

  const status: ProcessStatus = {
    role: role === 'both' ? 'all' : role,
    details: () => (scheduler ? { scheduler: scheduler.service.status() } : {}),
  };
  const port = options.port === undefined ? (role === 'worker' ? settings.workerPort : settings.schedulerPort) : options.port;
  // The role runs first, its HTTP server (NestJS: ~1 s of module loading under load) after: a scheduler's
  // first cycle does not wait for it. A server that cannot start stops the role again.
  worker?.start();
  await scheduler?.start();
  let server: HealthServer | null = null;
  if (port !== null) {
    try {
      const { startHealthServer } = await import('./health-server.js');
      const probes = { timeoutMs: config.readyTimeoutMs, postgres: () => database.ping(config.readyTimeoutMs), redis: () => redis.ping() };
      server = await startHealthServer(config, port, status, probes, logger, options.routes);
    } catch (error) {
      await scheduler?.stop();
      await worker?.close();
      redis.disconnect();
      if (ownsDatabase) await database.close();
      throw error;
    }
  }
  const url = server?.url ?? null;
  logger.info({ url, holder: scheduler?.holder, mode: config.kubeconfig ? 'kubernetes' : 'standalone' }, `quartermaster ${role} started`);

  let stopped = false;
  return {
    url,
    scheduler,
    async stop() {
      if (stopped) return;
      stopped = true;
      await scheduler?.stop();
      await worker?.close();
      await server?.close();
      redis.disconnect();
      if (ownsDatabase) await database.close();
      logger.info(`quartermaster ${role} stopped`);
    },
  };
}

async function handlersFor(config: Config, database: Database, logger: Logger, options: RoleOptions): Promise<AnySideEffectHandler[]> {
  if (!config.kubeconfig) return standaloneHandlers();
  if (!options.kubernetesHandlers) {
    throw new Error(`KUBECONFIG=${config.kubeconfig} selects Kubernetes mode, but no Kubernetes side-effect handlers are wired into this build: unset KUBECONFIG to run standalone`);
  }
  return options.kubernetesHandlers(config, database, logger);
}

/**
 * Runs `start`, stops on SIGTERM/SIGINT, and exits 1 with one line on a start-up failure. The signal
 * handlers are installed before `start` runs: a SIGTERM that arrives while the process is still starting
 * (a rolling update, a scale-down) stops it cleanly once it has started — a scheduler that already took
 * the lease gives it back — instead of killing it.
 */
export function runMain(name: string, start: () => Promise<{ stop(): Promise<void> }>): void {
  let running: { stop(): Promise<void> } | null = null;
  let requested: string | null = null;
  const shutdown = (signal: string): void => {
    process.stderr.write(`${name}: ${signal}, shutting down\n`);
    running!.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${name}: error while stopping: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string): void => {
    if (running) shutdown(signal);
    else requested ??= signal; // a second signal, unhandled, kills at once
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  Promise.resolve()
    .then(start) // a bad setting throws synchronously: still one line, exit 1
    .then((started) => {
      running = started;
      if (requested) shutdown(requested);
    })
    .catch((error: unknown) => {
      process.stderr.write(`${name}: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
