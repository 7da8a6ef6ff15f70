import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { BudgetedCycleResult, Snapshot } from '#core';
import type { Logger } from 'pino';
import type { FailpointHook } from './failpoints.js';
import type { ConnectionOptions } from 'bullmq';
import { CycleRunner } from './cycle-runner.js';
import type { CycleStore, FencingSource } from './cycle-store.js';
import { CycleTriggerSubscriber } from './cycle-trigger.js';
import { LeaderElector, type LeaseStore } from './leader-elector.js';
import { OutboxRelay } from './outbox-relay.js';
import type { OutboxStore } from './outbox-store.js';
import { Reconciler, type ReconcileStore } from './reconciler.js';
import type { SchedulerMetrics } from './scheduler-metrics.js';
import { SchedulerService } from './scheduler-service.js';
import type { SchedulerSettings } from './scheduler-settings.js';
import { SideEffectHandlerRegistry, type AnySideEffectHandler } from './side-effect-handlers.js';
import { SideEffectQueue, type QueueSettings } from './side-effect-queue.js';
import { SideEffectWorker } from './side-effect-worker.js';

/** The stores a scheduler process needs (Postgres implementations: see pg/). */
export interface SchedulerStores {
  cycles: CycleStore;
  leases: LeaseStore;
  outbox: OutboxStore;
  reconcile: ReconcileStore;
}

export interface SchedulerProcessDeps {
  stores: SchedulerStores;
  settings: SchedulerSettings;
  redisUrl: string;
  logger: Logger;
  metrics: SchedulerMetrics;
  /** The pure core (`runBudgetedCycle` of #core). */
  schedule: (snapshot: Snapshot) => BudgetedCycleResult;
  /** Unique id of this process in the lease (default host:pid:random). */
  holder?: string;
  /** Fault injection for tests (see failpoints.ts). */
  failpoint?: FailpointHook;
}

export function defaultHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export function queueSettings(settings: SchedulerSettings, redisUrl: string): QueueSettings {
  return {
    connection: redisConnection(redisUrl),
    prefix: settings.redisPrefix,
    attempts: settings.sideEffectAttempts,
    backoffMs: settings.sideEffectBackoffMs,
  };
}

/** BullMQ connection options from a redis:// URL (BullMQ needs maxRetriesPerRequest null on workers). */
export function redisConnection(redisUrl: string): ConnectionOptions {
  const u = new URL(redisUrl);
  const db = u.pathname.replace(/^\//, '');
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/** Everything a scheduler process runs: election, cycle loop, relay, reconcile. */
export interface SchedulerProcess {
  holder: string;
  service: SchedulerService;
  runner: CycleRunner;
  elector: LeaderElector;
  queue: SideEffectQueue;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createSchedulerProcess(deps: SchedulerProcessDeps): SchedulerProcess {
  const { stores, settings, logger, metrics } = deps;
  const holder = deps.holder ?? defaultHolder();
  const log = logger.child({ holder });
  const queue = new SideEffectQueue(queueSettings(settings, deps.redisUrl));
  const relay = new OutboxRelay(stores.outbox, queue, log);
  const reconciler = new Reconciler(stores.reconcile, relay, settings, log, metrics);

  // Late-bound: the service reacts to the elector, the elector is built with the service's callbacks.
  let service: SchedulerService | null = null;
  const elector = new LeaderElector(
    stores.leases,
    { leaseName: settings.leaseName, holder, ttlMs: settings.leaseTtlMs, renewEveryMs: settings.leaseRenewMs },
    log,
    { onElected: () => service?.onElected(), onDeposed: () => service?.onDeposed() },
  );
  const fencing: FencingSource = {
    current: () => {
      const leadership = elector.current;
      return Promise.resolve(leadership ? { leaseName: leadership.leaseName, token: leadership.fencingToken, holder } : null);
    },
  };
  const runner = new CycleRunner(stores.cycles, fencing, deps.schedule, log, [metrics]);
  const subscriber = new CycleTriggerSubscriber(deps.redisUrl, settings.redisPrefix, (reason) => service?.trigger(reason), log);
  service = new SchedulerService(elector, runner, relay, reconciler, subscriber, { holder, ...settings }, log, metrics, Date.now, deps.failpoint);
  const started = service;
  return {
    holder,
    service: started,
    runner,
    elector,
    queue,
    start: () => started.start(),
    stop: async () => {
      await started.stop();
      await queue.close();
    },
  };
}

export interface WorkerProcessDeps {
  outbox: OutboxStore;
  handlers: readonly AnySideEffectHandler[];
  settings: SchedulerSettings;
  redisUrl: string;
  logger: Logger;
  metrics: SchedulerMetrics;
}

/** A side-effect worker process. Fails at start if the handlers do not cover the catalogue exactly. */
export function createWorkerProcess(deps: WorkerProcessDeps): SideEffectWorker {
  const registry = SideEffectHandlerRegistry.create(deps.handlers);
  const { settings } = deps;
  return new SideEffectWorker(
    deps.outbox,
    registry,
    queueSettings(settings, deps.redisUrl),
    { concurrency: settings.workerConcurrency, slowRetryBaseMs: settings.sideEffectSlowRetryBaseMs, slowRetryMaxMs: settings.sideEffectSlowRetryMaxMs },
    deps.logger,
    deps.metrics,
  );
}
