import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, register } from 'prom-client';
import { AppError, bearerMatches } from '#common';

/**
 * Request metrics of the API on prom-client's global registry (shared with the scheduler's metrics when
 * both run in one process). Get-or-create, so a second API app in the same process (tests) reuses them.
 */
export function installApiMetrics(fastify: FastifyInstance, metricsTokenHash: string | null = null): void {
  if (!register.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics();
  const requests =
    (register.getSingleMetric('qm_api_requests_total') as Counter<'method' | 'route' | 'status'> | undefined) ??
    new Counter({ name: 'qm_api_requests_total', help: 'HTTP requests answered by the API', labelNames: ['method', 'route', 'status'] });
  const duration =
    (register.getSingleMetric('qm_api_request_duration_seconds') as Histogram<'method' | 'route'> | undefined) ??
    new Histogram({
      name: 'qm_api_request_duration_seconds',
      help: 'Time from request to response, by route template',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    });
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
  // Team names and job counts are not for everyone: with QM_METRICS_TOKEN set, only its bearer reads them.
  fastify.get('/metrics', async (request, reply) => {
    if (metricsTokenHash !== null && !bearerMatches(request.headers.authorization, metricsTokenHash)) {
      throw new AppError('UNAUTHENTICATED', '/metrics needs Authorization: Bearer <QM_METRICS_TOKEN> (Prometheus: authorization.credentials)');
    }
    const body = await register.metrics();
    return reply.type(register.contentType).send(body);
  });
}
