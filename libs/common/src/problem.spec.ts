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

  it.each([
    ['pg: refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['pg: connection dropped', new Error('Connection terminated unexpectedly')],
    ['pg: connect timeout', new Error('timeout expired')],
    ['pg: black-holed query', new Error('Query read timeout')],
    ['pg: server shutting down', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['prisma: closed connection', Object.assign(new Error('Server has closed the connection.'), { code: 'P1017', meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } })],
    ['prisma: statement timeout', Object.assign(new Error('Raw query failed'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57014' } } } })],
    ['wrapped', new Error('cycle failed', { cause: new Error('Connection terminated due to connection timeout') })],
  ])('answers %s with 503 DATABASE_UNAVAILABLE', (_, error) => {
    const { error: app, internal } = toAppError(error);
    expect(internal).toBe(false);
    expect(app.code).toBe('DATABASE_UNAVAILABLE');
    expect(problemOf(app).status).toBe(503);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['prisma: value out of range', Object.assign(new Error('out of range'), { code: 'P2020', meta: { driverAdapterError: { cause: { kind: 'postgres', code: '22008' } } } })],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
  ])('keeps %s INTERNAL', (_, error) => {
    expect(toAppError(error).error.code).toBe('INTERNAL');
  });
});
