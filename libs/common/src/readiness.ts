import { bearerMatches } from './config.js';

/**
 * Readiness of a process that needs Postgres and Redis (the API's /readyz, the scheduler's and the worker's):
 * both dependencies probed at once, each timed, and what a caller without the metrics token may see of it.
 */

/** One dependency's check: whether it answered, in how many ms, and why not. */
export interface DependencyCheck {
  ok: boolean;
  ms: number;
  error?: string;
}

export interface Readiness {
  /** Both answered: what decides the status code (200 or 503). */
  ready: boolean;
  status: 'ready' | 'unavailable';
  checks: { postgres: DependencyCheck; redis: DependencyCheck };
}

/** What /readyz shows a caller without QM_METRICS_TOKEN when it is set: ready or not, and ok per dependency. */
export interface PublicReadiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: { ok: boolean }; redis: { ok: boolean } };
}

export interface DependencyProbe {
  probe: () => Promise<unknown>;
  /** Prefixes its error (e.g. `postgres at postgresql://…`). */
  what?: string;
}

/**
 * Runs a probe and times it; a probe that throws, or (with `timeoutMs`) has not answered by then, is not ok
 * and says why. Probes that time out by themselves (a ping with its own timeout) need no `timeoutMs`.
 */
export async function checkDependency({ probe, what }: DependencyProbe, timeoutMs?: number): Promise<DependencyCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const answered = probe();
    await (timeoutMs === undefined
      ? answered
      : Promise.race([
          answered,
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]));
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, ms: Math.round(performance.now() - started), error: what === undefined ? message : `${what}: ${message}` };
  } finally {
    clearTimeout(timer);
  }
}

/** Postgres and Redis checked at once. */
export async function checkReadiness(probes: { postgres: DependencyProbe; redis: DependencyProbe }, timeoutMs?: number): Promise<Readiness> {
  const [postgres, redis] = await Promise.all([checkDependency(probes.postgres, timeoutMs), checkDependency(probes.redis, timeoutMs)]);
  const ready = postgres.ok && redis.ok;
  return { ready, status: ready ? 'ready' : 'unavailable', checks: { postgres, redis } };
}

/** True when the caller may see everything: no QM_METRICS_TOKEN set (`hash` null), or it carries it. */
export function opsAccessAllowed(authorization: string | string[] | undefined, hash: string | null): boolean {
  return hash === null || bearerMatches(authorization, hash);
}

/** Readiness as a caller without the metrics token sees it: no timings, error text or process details. */
export function publicReadiness(r: Readiness): PublicReadiness {
  return { status: r.status, checks: { postgres: { ok: r.checks.postgres.ok }, redis: { ok: r.checks.redis.ok } } };
}
