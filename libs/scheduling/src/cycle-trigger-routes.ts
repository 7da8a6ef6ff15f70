import type { CycleTriggerReason } from './cycle-trigger.js';

/**
 * Which API writes may let a job start (or need a side effect relayed), so that the API can publish a
 * cycle trigger after its commit. `route` is the route pattern (`/v1/jobs/:id`), not the concrete URL.
 * Returns null for reads, failed requests and writes that change nothing the scheduler reads.
 */
export function triggerReasonFor(method: string, route: string, statusCode: number): CycleTriggerReason | null {
  if (statusCode < 200 || statusCode >= 300) return null;
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return null;
  const path = route.replace(/\/+$/, '');
  if (m === 'POST' && path === '/v1/jobs') return 'job.submitted';
  if (m === 'DELETE' && /^\/v1\/jobs\/:[^/]+$/.test(path)) return 'job.cancelled';
  if (m === 'POST' && /^\/v1\/jobs\/:[^/]+\/status$/.test(path)) return 'job.status';
  if (m === 'POST' && /^\/v1\/jobs\/:[^/]+\/priority$/.test(path)) return 'job.submitted';
  if (/^\/v1\/teams\/:[^/]+\/quotas\/:[^/]+$/.test(path)) return 'quota.changed';
  if (/^\/v1\/(teams|cohorts)\/:[^/]+$/.test(path)) return 'team.changed';
  if (/^\/v1\/nodes\/:[^/]+$/.test(path)) return 'node.changed';
  if (/^\/v1\/flavors\/:[^/]+$/.test(path)) return 'flavor.changed';
  return null;
}

/** The part of a Fastify instance the hook needs. */
export interface HookableServer {
  addHook(
    name: 'onResponse',
    hook: (request: { method: string; routeOptions: { url?: string } }, reply: { statusCode: number }) => Promise<void>,
  ): unknown;
}

/**
 * Publishes a cycle trigger after every successful API write that matters (the response is sent after
 * the write committed). For processes that compose the API without it publishing triggers itself;
 * duplicates are harmless (the scheduler debounces).
 */
export function registerCycleTriggerHook(server: HookableServer, publish: (reason: CycleTriggerReason) => Promise<void>): void {
  server.addHook('onResponse', async (request, reply) => {
    const reason = triggerReasonFor(request.method, request.routeOptions.url ?? '', reply.statusCode);
    if (reason) await publish(reason);
  });
}
