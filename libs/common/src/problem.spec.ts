import { describe, expect, it } from '@jest/globals';
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { AppError, ERROR_CODES } from './error-codes.js';
import { httpStatusOf, problemOf, toAppError } from './problem.js';

describe('problem+json', () => {
  it('maps every error code to a 4xx/5xx status', () => {
    for (const code of ERROR_CODES) {
      const status = httpStatusOf(code);
      expect(status >= 400 && status < 600).toBe(true);
    }
    expect(httpStatusOf('VALIDATION_FAILED')).toBe(400);
    expect(httpStatusOf('UNAUTHENTICATED')).toBe(401);
    expect(httpStatusOf('FORBIDDEN')).toBe(403);
    expect(httpStatusOf('IDEMPOTENCY_KEY_REUSED')).toBe(409);
    expect(httpStatusOf('FLAVOR_IN_USE')).toBe(409);
    expect(httpStatusOf('UNKNOWN_REFERENCE')).toBe(422);
  });

  it('renders type, title, status, detail, code and errors', () => {
    const p = problemOf(new AppError('VALIDATION_FAILED', 'invalid field: replicas', [{ field: 'replicas', message: 'must be ≥ 1' }]));
    expect(p).toEqual({
      type: 'urn:quartermaster:problem:validation-failed',
      title: 'The request has invalid fields',
      status: 400,
      detail: 'invalid field: replicas',
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'replicas', message: 'must be ≥ 1' }],
    });
  });

  it('turns framework errors into codes and hides internal ones', () => {
    expect(toAppError(new NotFoundException()).error.code).toBe('NOT_FOUND');
    expect(toAppError(new BadRequestException('x')).error.code).toBe('MALFORMED_REQUEST');
    expect(toAppError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413, message: 'too large' }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(toAppError({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415, message: 'xml' }).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const internal = toAppError(new Error('connection string postgresql://u:secret@db leaked'));
    expect(internal.internal).toBe(true);
    expect(internal.error.code).toBe('INTERNAL');
    expect(internal.error.detail).not.toContain('secret');
  });
});
