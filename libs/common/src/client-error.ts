import type { Socket } from 'node:net';
import { AppError } from './error-codes.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from './problem.js';

/** The part of Node's `clientError` error this reads. */
interface ClientError extends Error {
  code?: string;
}

/**
 * What an HTTP server answers to a request Node's parser refuses before any route sees it (Fastify's
 * `clientErrorHandler`): problem+json like every other error, where Fastify wrote plain JSON. A URL and
 * headers over the parser's limit (16 KiB) are a 431; a request that took too long to arrive 408;
 * anything else unreadable 400.
 */
export function clientErrorProblem(error: ClientError): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT', 'the request did not arrive in time; send it again');
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // Node counts the request line and the headers together; no URL of this API comes near the limit.
    return new AppError('HEADERS_TOO_LARGE', 'the URL and headers together are larger than the server reads (16 KiB); shorten them');
  }
  return new AppError('MALFORMED_REQUEST', 'the request is not valid HTTP');
}

/** Writes `clientErrorProblem(error)` on the raw socket and closes it (nothing is written to a socket already gone). */
export function answerClientError(error: ClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const problem = problemOf(clientErrorProblem(error));
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
