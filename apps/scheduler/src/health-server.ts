import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, PinoNestLogger, ProblemFilter, serverTimeouts } from '#common';
import { SchedulerAppModule } from './scheduler-app.module.js';
import type { Probes, ProcessStatus } from './process-status.js';

export interface HealthServer {
  /** Bound http URL. */
  url: string;
  close(): Promise<void>;
}

/**
 * The HTTP server of a scheduler or worker process (/healthz, /readyz, /metrics, and `routes`: the
 * scheduler extender in Kubernetes mode). Imported by `startRole` only once the role runs: NestJS and
 * Fastify are ~1 s of module loading under load that a scheduler's first cycle need not wait for.
 */
export async function startHealthServer(
  config: Config,
  port: number,
  status: ProcessStatus,
  probes: Probes,
  logger: Logger,
  routes?: (host: FastifyInstance) => void,
): Promise<HealthServer> {
  const app = await NestFactory.create<NestFastifyApplication>(
    SchedulerAppModule.forRoot(status, probes, { metricsTokenHash: config.metricsTokenHash }),
    // Slow or silent clients (anyone who reaches the port: the extender's verbs too) do not keep sockets.
    new FastifyAdapter({ logger: false, ...serverTimeouts(config.httpTimeouts) }),
    { logger: new PinoNestLogger(logger), abortOnError: false },
  );
  try {
    app.useGlobalFilters(new ProblemFilter(logger)); // errors (401 of /metrics, 404) as problem+json, like the API's
    routes?.(app.getHttpAdapter().getInstance());
    await app.listen(port, config.host);
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  const address = app.getHttpServer().address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : port}`, close: () => app.close() };
}
