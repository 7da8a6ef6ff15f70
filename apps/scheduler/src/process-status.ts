/** What /readyz of a scheduler or worker process reports besides its dependencies. */
export interface ProcessStatus {
  role: 'scheduler' | 'worker' | 'all';
  /** Leadership and the last cycle (scheduler), or null (worker). */
  details(): Record<string, unknown>;
}

export const PROCESS_STATUS = Symbol('PROCESS_STATUS');
export const PROBES = Symbol('PROBES');
export const OPS_ACCESS = Symbol('OPS_ACCESS');

/**
 * Who may read /metrics and the detail of /readyz: with QM_METRICS_TOKEN set (`metricsTokenHash`, its
 * sha256), only its bearer — the same rule as the API's. Null: both open.
 */
export interface OpsAccess {
  metricsTokenHash: string | null;
}

/** Dependency checks of /readyz, each with its own timeout. */
export interface Probes {
  timeoutMs: number;
  postgres(): Promise<unknown>;
  redis(): Promise<unknown>;
}
