import type { HttpTimeouts } from './config.js';

/**
 * Fastify's server options for HttpTimeouts, the same for the API's port and the scheduler's and worker's
 * (health, metrics, the extender): a request's headers and body within `requestMs` — Node checks its
 * connections at most a second apart for that, not every 30 s —, keep-alive idle `keepAliveMs`, silence
 * either way `idleMs`.
 */
export function serverTimeouts({ requestMs, keepAliveMs, idleMs }: HttpTimeouts): {
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionTimeout: number;
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: requestMs,
    keepAliveTimeout: keepAliveMs,
    connectionTimeout: idleMs,
    http: { headersTimeout: requestMs, requestTimeout: requestMs, connectionsCheckingInterval: Math.min(1000, requestMs) },
  };
}
