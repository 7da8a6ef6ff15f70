import { REDIS_URL } from './support.js';

/** Environment of scheduler/worker child processes in tests: fast lease, ticks and reconcile. */
export function childEnv(databaseUrl: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QM_ADMIN_TOKEN: 'scheduler-test-admin-token-0123456789',
    QM_REDIS_PREFIX: prefix,
    QM_LEASE_TTL_MS: '1500',
    QM_LEASE_RENEW_MS: '300',
    QM_CYCLE_DEBOUNCE_MS: '5',
    QM_CYCLE_TICK_MS: '200',
    QM_RECONCILE_EVERY_MS: '500',
    QM_GANG_TIMEOUT_MS: '600000',
    QM_SIDE_EFFECT_BACKOFF_MS: '20',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
