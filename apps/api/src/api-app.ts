import 'reflect-metadata';
import { type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { answerClientError, Config, createLogger, PinoNestLogger, ProblemFilter, redactUrl, sendProblem, serverTimeouts } from '#common';
import { runBudgetedCycle } from '#core';
import type { Database } from '#db';
import { CycleTriggerPublisher, ManualCycle, registerCycleTriggerHook, schedulerSettingsFromEnv, type SchedulerSettings } from '#scheduling';
import { ApiModule } from './app.module.js';
import { defaultConsoleDir } from './console/console-files.js';
import { installConsole } from './console/console-static.js';
import type { Infrastructure } from './infra/infra.module.js';
import { createRedis, withTimeout } from './infra/redis.js';
import { installApiMetrics } from './metrics/api-metrics.js';
import { setupOpenApi } from './openapi.js';
import type { CycleRunnerPort } from './scheduler/cycle-runner.port.js';
import { apiDatabase, prepareDatabase, StartupError, startupReason as reason } from './startup.js';
import { installJsonBodyCheck } from './validation/json-body.js';
import { ApiValidationPipe } from './validation/validation.pipe.js';

export { StartupError } from './startup.js';

export interface ApiAppOptions {
  /** Share handles with the rest of a composed process; created (and closed with the app) when absent. */
  logger?: Logger;
  database?: Database;
  redis?: Redis;
  /** More modules of the same process (scheduler, workers), given the same infrastructure. */
  imports?: DynamicModule[];
  /** Runs POST /v1/scheduler/cycles; by default a ManualCycle of #scheduling over the same database. */
  cycles?: CycleRunnerPort;
  /** Scheduler settings for the default ManualCycle (lease name, Redis prefix…); defaults when absent. */
  scheduler?: SchedulerSettings;
  /** Apply migrations (creating the database if missing) before serving. Default true. */
  migrate?: boolean;
  /** Built web console served at /ui; default dist/console of this installation. */
  consoleDir?: string;
}

export interface ApiApp {
  app: NestFastifyApplication;
  database: Database;
  redis: Redis;
  logger: Logger;
  /** Listens on config.host:config.port; returns the bound URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds the API (not yet listening): migrations applied, Postgres and Redis checked (StartupError with
 * one clear line when unreachable), Fastify + global validation + the problem+json filter + OpenAPI.
 */
export async function createApiApp(config: Config, options: ApiAppOptions = {}): Promise<ApiApp> {
  const logger = options.logger ?? createLogger(config.logLevel, 'quartermaster-api');
  if (options.migrate !== false) await prepareDatabase(config);
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? apiDatabase(config);
  const ownsRedis = options.redis === undefined;
  const redis = options.redis ?? createRedis(config.redisUrl, config.readyTimeoutMs);
  const release = async (): Promise<void> => {
    if (ownsRedis) redis.disconnect();
    if (ownsDatabase) await database.close().catch(() => undefined);
  };
  try {
    await database.ping(Math.max(config.readyTimeoutMs, 2000)).catch((error: unknown) => {
      throw new StartupError(`cannot reach Postgres at ${redactUrl(config.databaseUrl)} (${reason(error)}): start Postgres or fix DATABASE_URL`);
    });
    if (ownsRedis) {
      let cause: unknown = null;
      const remember = (e: unknown): void => {
        cause ??= e;
      };
      redis.on('error', remember);
      await withTimeout(redis.connect(), Math.max(config.readyTimeoutMs, 2000), 'redis').catch((error: unknown) => {
        throw new StartupError(`cannot reach Redis at ${redactUrl(config.redisUrl)} (${reason(cause ?? error)}): start Redis or fix REDIS_URL`);
      });
      redis.off('error', remember);
    }
  } catch (error) {
    await release();
    throw error;
  }

  const settings = options.scheduler ?? schedulerSettingsFromEnv({});
  const ownsCycles = options.cycles === undefined;
  const cycles =
    options.cycles ?? new ManualCycle({ database, settings, redisUrl: config.redisUrl, logger, schedule: runBudgetedCycle });
  let app: NestFastifyApplication;
  try {
    app = await buildNestApp(config, { config, logger, database, redis, redisPrefix: settings.redisPrefix, cycles }, options.imports ?? [], options.consoleDir ?? defaultConsoleDir());
  } catch (error) {
    if (ownsCycles) await cycles.close?.().catch(() => undefined);
    await release();
    throw error;
  }
  // After each committed write that may let a job start, tell the scheduler (it debounces), wherever it runs.
  const triggers = new CycleTriggerPublisher(config.redisUrl, settings.redisPrefix, logger);
  registerCycleTriggerHook(app.getHttpAdapter().getInstance(), (why) => triggers.publish(why));
  return {
    app,
    database,
    redis,
    logger,
    async listen() {
      await app.listen(config.port, config.host);
      const address = app.getHttpServer().address();
      const port = typeof address === 'object' && address !== null ? address.port : config.port;
      const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
      logger.info({ url }, 'quartermaster API listening');
      return url;
    },
    async close() {
      await app.close();
      await triggers.close();
      if (ownsCycles) await cycles.close?.().catch(() => undefined);
      await release();
    },
  };
}

async function buildNestApp(config: Config, infra: Infrastructure, imports: DynamicModule[], consoleDir: string): Promise<NestFastifyApplication> {
  const app = await createNestApp(config, infra, imports);
  setupOpenApi(app);
  installApiMetrics(app.getHttpAdapter().getInstance(), config.metricsTokenHash);
  installJsonBodyCheck(app.getHttpAdapter().getInstance());
  installConsole(app.getHttpAdapter().getInstance(), consoleDir);
  // No enableShutdownHooks(): each entry point handles SIGTERM and closes the app itself. Nest's hook
  // would re-raise the signal once the API closed, killing `npm start` before its scheduler released the
  // lease and its worker finished.
  await app.init();
  return app;
}

/** The Nest application with its routes, pipes and filters, neither initialised nor listening. */
export async function createNestApp(config: Config, infra: Infrastructure, imports: DynamicModule[] = []): Promise<NestFastifyApplication> {
  // maxParamLength: Kubernetes node names may be 253 characters (Fastify's default is 100 → 414).
  // frameworkErrors: the router's own refusals (a path parameter over maxParamLength → 414, a URL that
  // does not decode → 400) go out as problem+json like every other error.
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    // Slow or silent clients do not keep sockets (HttpTimeouts).
    ...serverTimeouts(config.httpTimeouts),
    logger: false,
    trustProxy: true,
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => sendProblem(error, request, reply, infra.logger),
    // Node's parser refusals (a URL or headers over 16 KiB, a malformed request line) too.
    clientErrorHandler: answerClientError,
  });
  // bodyParser false: the JSON parser is installJsonBodyCheck's (a nesting limit before parsing).
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(infra, { imports }), adapter, {
    logger: new PinoNestLogger(infra.logger),
    abortOnError: false,
    bodyParser: false,
  });
  app.useGlobalPipes(new ApiValidationPipe());
  app.useGlobalFilters(new ProblemFilter(infra.logger));
  return app;
}
