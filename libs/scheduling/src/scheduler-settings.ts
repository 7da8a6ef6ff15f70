import { DEFAULT_OPTIONS, type SchedulerOptions } from '#core';
import type { HistoryRetention } from '#db';

/**
 * Settings of the scheduler and worker processes (on top of #common's Config), validated once at start.
 * Defaults suit one cluster; every value can be set from the environment (names in SCHEDULER_ENV).
 */
export class SchedulerSettingsError extends Error {
  readonly code = 'SCHEDULER_SETTINGS_INVALID' as const;
}

export interface SchedulerSettings {
  /** HTTP port of the scheduler process (/healthz, /readyz, /metrics); 0 = any free port. */
  schedulerPort: number;
  /** HTTP port of a worker process (/healthz, /metrics); 0 = any free port. */
  workerPort: number;
  /** Prefix of every Redis key (queues and the trigger channel). */
  redisPrefix: string;
  leaseName: string;
  leaseTtlMs: number;
  leaseRenewMs: number;
  cycleDebounceMs: number;
  cycleTickMs: number;
  reconcileEveryMs: number;
  snapshotFullReloadMs: number;
  /** An ADMITTED job not RUNNING after this long is requeued (standalone executors). */
  gangTimeoutMs: number;
  requeueBackoffBaseMs: number;
  requeueBackoffMaxMs: number;
  sideEffectAttempts: number;
  sideEffectBackoffMs: number;
  sideEffectSlowRetryBaseMs: number;
  sideEffectSlowRetryMaxMs: number;
  workerConcurrency: number;
  /** Queue order of the core (SchedulerOptions.ordering): `fifo` or `shortest-first`. */
  queueOrdering: 'fifo' | 'shortest-first';
  /** SchedulerOptions.slowerFlavorDelayWeight in percent (300 = 3: the core's default). */
  slowerFlavorDelayPercent: number;
  /**
   * `npm start` (API, scheduler and worker in one process) loads the API once the first cycle has ended (or
   * the process is a standby), at most this long after the scheduler started; 0 = at once.
   */
  apiWaitsForFirstCycleMs: number;
  /** How long the fleet history keeps its minute rows (hours), its hour rows and its day rows (days). */
  historyMinutesKeepHours: number;
  historyHoursKeepDays: number;
  historyDaysKeepDays: number;
}

export const SCHEDULER_ENV: Record<keyof SchedulerSettings, { env: string; default: string; min?: number; max?: number; choices?: readonly string[] }> = {
  schedulerPort: { env: 'QM_SCHEDULER_PORT', default: '8081', min: 0, max: 65535 },
  workerPort: { env: 'QM_WORKER_PORT', default: '8082', min: 0, max: 65535 },
  redisPrefix: { env: 'QM_REDIS_PREFIX', default: 'qm' },
  leaseName: { env: 'QM_LEASE_NAME', default: 'scheduler' },
  leaseTtlMs: { env: 'QM_LEASE_TTL_MS', default: '5000', min: 200, max: 600_000 },
  leaseRenewMs: { env: 'QM_LEASE_RENEW_MS', default: '1000', min: 50, max: 300_000 },
  cycleDebounceMs: { env: 'QM_CYCLE_DEBOUNCE_MS', default: '20', min: 0, max: 60_000 },
  cycleTickMs: { env: 'QM_CYCLE_TICK_MS', default: '1000', min: 10, max: 3_600_000 },
  reconcileEveryMs: { env: 'QM_RECONCILE_EVERY_MS', default: '5000', min: 50, max: 3_600_000 },
  // The incremental snapshot's checked full reload (0: read everything every cycle). At most half the
  // change log's 10-minute retention.
  snapshotFullReloadMs: { env: 'QM_SNAPSHOT_FULL_RELOAD_MS', default: '60000', min: 0, max: 300_000 },
  gangTimeoutMs: { env: 'QM_GANG_TIMEOUT_MS', default: '300000', min: 100, max: 86_400_000 },
  requeueBackoffBaseMs: { env: 'QM_REQUEUE_BACKOFF_BASE_MS', default: '10000', min: 0, max: 86_400_000 },
  requeueBackoffMaxMs: { env: 'QM_REQUEUE_BACKOFF_MAX_MS', default: '600000', min: 0, max: 86_400_000 },
  sideEffectAttempts: { env: 'QM_SIDE_EFFECT_ATTEMPTS', default: '8', min: 1, max: 100 },
  sideEffectBackoffMs: { env: 'QM_SIDE_EFFECT_BACKOFF_MS', default: '200', min: 1, max: 600_000 },
  sideEffectSlowRetryBaseMs: { env: 'QM_SIDE_EFFECT_SLOW_RETRY_MS', default: '30000', min: 10, max: 86_400_000 },
  sideEffectSlowRetryMaxMs: { env: 'QM_SIDE_EFFECT_SLOW_RETRY_MAX_MS', default: '900000', min: 10, max: 86_400_000 },
  // Side effects are I/O-bound API-server calls (create pod, bind, evict): 128 in flight per worker
  // process doubled pods bound per second over 32 in bench:k8s; kube-apiserver's priority and fairness
  // queues what it cannot take.
  workerConcurrency: { env: 'QM_WORKER_CONCURRENCY', default: '128', min: 1, max: 1000 },
  // libs/core ordering.ts: shortest-first = least expected accelerator-seconds first, aged by the time waited.
  queueOrdering: { env: 'QM_QUEUE_ORDERING', default: 'fifo', choices: ['fifo', 'shortest-first'] },
  // libs/core relative-placement.ts: a slower flavor is taken only when the job gains more than the delay its
  // slower run causes the other waiting jobs × this weight (0: its own finish alone).
  slowerFlavorDelayPercent: { env: 'QM_SLOWER_FLAVOR_DELAY_PERCENT', default: '300', min: 0, max: 10_000 },
  // Loading the API's modules (NestJS, Fastify, Swagger, class-validator: seconds under load) beside a first
  // cycle's commit slowed the commit by a quarter (Postgres and the module loading share 2 cores).
  apiWaitsForFirstCycleMs: { env: 'QM_API_WAITS_FOR_FIRST_CYCLE_MS', default: '5000', min: 0, max: 600_000 },
  // libs/db fleet-history.ts: a minute sample per flavor and team, rolled up into hours and days. 200 teams
  // active on 4 flavors: 804 rows a minute, ~310 bytes each with the indexes (bench:history) — ~360 MB of
  // minutes at 24 h, ~190 MB of hours at 31 days, ~180 MB of days at 2 years.
  historyMinutesKeepHours: { env: 'QM_HISTORY_MINUTES_KEEP_HOURS', default: '24', min: 1, max: 24 * 31 },
  historyHoursKeepDays: { env: 'QM_HISTORY_HOURS_KEEP_DAYS', default: '31', min: 1, max: 3660 },
  historyDaysKeepDays: { env: 'QM_HISTORY_DAYS_KEEP_DAYS', default: '730', min: 1, max: 36600 },
};

const PREFIX_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export function schedulerSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): SchedulerSettings {
  const out: Record<string, number | string> = {};
  for (const [key, spec] of Object.entries(SCHEDULER_ENV)) {
    const raw = env[spec.env]?.trim() || spec.default;
    if (spec.choices !== undefined) {
      if (!spec.choices.includes(raw)) throw new SchedulerSettingsError(`${spec.env}=${raw} must be one of ${spec.choices.join(', ')}`);
      out[key] = raw;
      continue;
    }
    if (spec.min === undefined) {
      if (!PREFIX_PATTERN.test(raw)) throw new SchedulerSettingsError(`${spec.env}=${raw} must be 1-64 letters, digits, '_', '.' or '-'`);
      out[key] = raw;
      continue;
    }
    if (!/^\d+$/.test(raw)) throw new SchedulerSettingsError(`${spec.env}=${raw} is not a whole number: use an integer from ${spec.min} to ${spec.max}`);
    const n = Number(raw);
    if (n < spec.min || n > (spec.max ?? Infinity)) throw new SchedulerSettingsError(`${spec.env}=${raw} is out of range: use an integer from ${spec.min} to ${spec.max}`);
    out[key] = n;
  }
  const settings = out as unknown as SchedulerSettings;
  if (settings.leaseRenewMs * 2 > settings.leaseTtlMs) {
    throw new SchedulerSettingsError(`QM_LEASE_RENEW_MS=${settings.leaseRenewMs} must be at most half of QM_LEASE_TTL_MS=${settings.leaseTtlMs}`);
  }
  if (settings.requeueBackoffMaxMs < settings.requeueBackoffBaseMs) {
    throw new SchedulerSettingsError('QM_REQUEUE_BACKOFF_MAX_MS must be ≥ QM_REQUEUE_BACKOFF_BASE_MS');
  }
  if (settings.sideEffectSlowRetryMaxMs < settings.sideEffectSlowRetryBaseMs) {
    throw new SchedulerSettingsError('QM_SIDE_EFFECT_SLOW_RETRY_MAX_MS must be ≥ QM_SIDE_EFFECT_SLOW_RETRY_MS');
  }
  return settings;
}

/** How long each grain of the fleet history is kept. */
export function historyRetentionOf(settings: Pick<SchedulerSettings, 'historyMinutesKeepHours' | 'historyHoursKeepDays' | 'historyDaysKeepDays'>): HistoryRetention {
  return { minuteMs: settings.historyMinutesKeepHours * 3_600_000, hourMs: settings.historyHoursKeepDays * 86_400_000, dayMs: settings.historyDaysKeepDays * 86_400_000 };
}

/** The core's options for the scheduler's cycles (the defaults, with the queue order and the slower-flavor weight from the settings). */
export function schedulerOptionsOf(settings: Pick<SchedulerSettings, 'queueOrdering' | 'slowerFlavorDelayPercent'>): SchedulerOptions {
  return { ...DEFAULT_OPTIONS, ordering: settings.queueOrdering, slowerFlavorDelayWeight: settings.slowerFlavorDelayPercent / 100 };
}
