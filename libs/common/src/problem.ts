import { HttpException } from '@nestjs/common';
import { isDatabaseUnavailable } from './database-unavailable.js';
import { AppError, LimitExceededError, type ErrorCode, type FieldError } from './error-codes.js';

/** RFC 9457 problem details, as every error response of the API carries them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The machine-readable error code (an extension member). */
  code: ErrorCode;
  errors: FieldError[];
  /** For LIMIT_EXCEEDED (429): which per-team limit refused the request, e.g. "maxPendingJobs". */
  limit?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * The one mapping from error code to HTTP status. The switch is exhaustive: a new ErrorCode does not
 * compile until it gets a status here.
 */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_FAILED':
    case 'MALFORMED_REQUEST':
      return 400;
    case 'UNAUTHENTICATED':
    case 'TOKEN_EXPIRED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'IDEMPOTENCY_KEY_REUSED':
    case 'FLAVOR_IN_USE':
    case 'IN_USE':
    case 'INVALID_TRANSITION':
    case 'CONFLICT':
      return 409;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'URI_TOO_LONG':
      return 414;
    case 'HEADERS_TOO_LARGE':
      return 431;
    case 'REQUEST_TIMEOUT':
      return 408;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'LIMIT_EXCEEDED':
      return 429;
    case 'UNKNOWN_REFERENCE':
      return 422;
    case 'UNAVAILABLE':
    case 'DATABASE_UNAVAILABLE':
      return 503;
    case 'INTERNAL':
      return 500;
    default: {
      const unmapped: never = code;
      throw new Error(`error code ${String(unmapped)} has no HTTP status`);
    }
  }
}

const TITLES: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'The request has invalid fields',
  MALFORMED_REQUEST: 'The request could not be read',
  UNAUTHENTICATED: 'Missing or invalid token',
  TOKEN_EXPIRED: 'Token expired',
  FORBIDDEN: 'Not allowed',
  NOT_FOUND: 'Not found',
  IDEMPOTENCY_KEY_REUSED: 'Idempotency-Key reused with another request',
  FLAVOR_IN_USE: 'Flavor in use',
  IN_USE: 'Still in use',
  INVALID_TRANSITION: 'Invalid state transition',
  CONFLICT: 'Conflict',
  UNKNOWN_REFERENCE: 'Unknown referenced object',
  PAYLOAD_TOO_LARGE: 'Request body too large',
  URI_TOO_LONG: 'Path too long',
  HEADERS_TOO_LARGE: 'Request headers too large',
  REQUEST_TIMEOUT: 'Request timed out',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  LIMIT_EXCEEDED: 'Team limit reached',
  UNAVAILABLE: 'Service unavailable',
  DATABASE_UNAVAILABLE: 'Database unavailable',
  INTERNAL: 'Internal error',
};

export function problemOf(error: AppError): Problem {
  return {
    type: `urn:quartermaster:problem:${error.code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[error.code],
    status: httpStatusOf(error.code),
    detail: error.detail,
    code: error.code,
    errors: error.errors,
    ...(error instanceof LimitExceededError ? { limit: error.limit } : {}),
  };
}

/** Seconds the client should wait before retrying (the Retry-After header), or null when it should not retry as is. */
export function retryAfterOf(error: AppError): number | null {
  if (error instanceof LimitExceededError) return Math.max(1, Math.ceil(error.retryAfterSeconds));
  return httpStatusOf(error.code) === 503 ? RETRY_AFTER_SECONDS : null;
}

/** Fastify's own errors (body parsing, limits) carry a `code` like FST_ERR_CTP_BODY_TOO_LARGE and a statusCode. */
interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/** Seconds a client should wait before retrying a 503 (the Retry-After header). */
export const RETRY_AFTER_SECONDS = 1;

/**
 * Turns anything thrown into an AppError: AppErrors pass through; Nest HttpExceptions and Fastify errors
 * become the code of their status; a lost or unreachable Postgres is DATABASE_UNAVAILABLE (503, retry);
 * everything else is INTERNAL (and `internal` is true, to be logged).
 */
export function toAppError(error: unknown): { error: AppError; internal: boolean } {
  if (error instanceof AppError) return { error, internal: false };
  if (error instanceof HttpException) {
    const status = error.getStatus();
    return { error: new AppError(codeOfStatus(status), status === 404 ? 'no such route' : error.message), internal: status >= 500 };
  }
  if (typeof error === 'object' && error !== null) {
    const e = error as FrameworkError;
    const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
    const message = typeof e.message === 'string' ? e.message : 'request rejected';
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { error: new AppError('PAYLOAD_TOO_LARGE', message), internal: false };
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return { error: new AppError('UNSUPPORTED_MEDIA_TYPE', `${message}; send Content-Type: application/json`), internal: false };
    }
    if (status !== undefined && status >= 400 && status < 500) {
      return { error: new AppError(codeOfStatus(status), message), internal: false };
    }
  }
  if (isDatabaseUnavailable(error)) {
    const detail = `Postgres is unreachable or not answering: retry after ${RETRY_AFTER_SECONDS} s (a job submission retried with the same Idempotency-Key is never created twice)`;
    return { error: new AppError('DATABASE_UNAVAILABLE', detail), internal: false };
  }
  return { error: new AppError('INTERNAL', 'an internal error occurred; it has been logged'), internal: true };
}

function codeOfStatus(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404 || status === 405) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 413) return 'PAYLOAD_TOO_LARGE';
  if (status === 414) return 'URI_TOO_LONG';
  if (status === 415) return 'UNSUPPORTED_MEDIA_TYPE';
  if (status === 422) return 'UNKNOWN_REFERENCE';
  if (status === 503) return 'UNAVAILABLE';
  if (status >= 400 && status < 500) return 'MALFORMED_REQUEST';
  return 'INTERNAL';
}
