import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE, problemOf, retryAfterOf, toAppError } from './problem.js';

/**
 * The one exception filter of every HTTP transport: whatever is thrown leaves as application/problem+json
 * with the status `httpStatusOf` gives its code. Internal errors are logged with their stack, never sent.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendProblem(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.logger);
  }
}

/** Also used as Fastify's error handler, for errors raised before Nest sees the request (body parsing). */
export function sendProblem(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const { error, internal } = toAppError(exception);
  if (internal) logger.error({ err: exception, method: request.method, url: request.url }, 'request failed');
  else if (error.code === 'DATABASE_UNAVAILABLE') logger.warn({ method: request.method, url: request.url, reason: reasonOf(exception) }, 'request failed: Postgres unavailable');
  const problem = problemOf(error);
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== null) void reply.header('retry-after', String(retryAfter));
  void reply.status(problem.status).header('content-type', PROBLEM_CONTENT_TYPE).send(problem);
}

function reasonOf(exception: unknown): string {
  return exception instanceof Error ? (exception.message.trim().split('\n').pop() ?? exception.name) : String(exception);
}
