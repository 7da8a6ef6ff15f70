/**
 * Every error the services raise carries one of these codes. The HTTP status of each code is decided in
 * exactly one place, `httpStatusOf` (problem.filter.ts), by an exhaustive switch: adding a code here is a
 * compile error until it is mapped there.
 */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MALFORMED_REQUEST',
  'UNAUTHENTICATED',
  'TOKEN_EXPIRED',
  'FORBIDDEN',
  'NOT_FOUND',
  'IDEMPOTENCY_KEY_REUSED',
  'FLAVOR_IN_USE',
  'IN_USE',
  'INVALID_TRANSITION',
  'CONFLICT',
  'UNKNOWN_REFERENCE',
  'PAYLOAD_TOO_LARGE',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'UNSUPPORTED_MEDIA_TYPE',
  'LIMIT_EXCEEDED',
  'UNAVAILABLE',
  'DATABASE_UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One offending input field: a dotted path (`template.cpuMillis`, `flavors[1]`) and the reason. */
export interface FieldError {
  field: string;
  message: string;
}

/** The error every service throws. `detail` is written for the person who sent the request. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

/**
 * A per-team limit refused the request (429): `limit` names it (an extension member of the problem, e.g.
 * "maxPendingJobs"), and the answer carries `Retry-After: retryAfterSeconds`. Nothing was written.
 */
export class LimitExceededError extends AppError {
  constructor(
    readonly limit: string,
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super('LIMIT_EXCEEDED', detail);
    this.name = 'LimitExceededError';
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} does not exist`);
export const forbidden = (detail: string): AppError => new AppError('FORBIDDEN', detail);
export const unknownReference = (field: string, message: string): AppError =>
  new AppError('UNKNOWN_REFERENCE', `${field}: ${message}`, [{ field, message }]);
