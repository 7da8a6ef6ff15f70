import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '#common';

/** `application/json`, or a structured `+json` type (`application/merge-patch+json`), with any parameters. */
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return request.headers['transfer-encoding'] !== undefined;
}

/**
 * Every request body is JSON: a body sent with another content type, or none (curl -d sends
 * application/x-www-form-urlencoded, fetch with a string text/plain) is refused with 415 problem+json that
 * says what to send, before any parser turns it into something a validator would misreport as an unknown
 * field. Requests without a body (GET, DELETE, an empty POST) pass whatever their headers say.
 */
export function installJsonBodyCheck(fastify: FastifyInstance): void {
  // Structured +json types (application/merge-patch+json for PATCH) are JSON: same parser, same poisoning checks.
  fastify.addContentTypeParser(/^application\/[\w.-]+\+json\s*(?:;|$)/i, { parseAs: 'string' }, fastify.getDefaultJsonParser('error', 'error'));
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!hasBody(request)) return done();
    const type = request.headers['content-type'];
    if (type !== undefined && JSON_TYPE.test(type)) return done();
    done(
      new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `${type === undefined ? 'a request body without Content-Type' : `Content-Type ${type.split(';')[0]!.trim()}`} is not accepted: ` +
          `send the body as JSON with the header Content-Type: application/json (curl: -H 'Content-Type: application/json')`,
      ),
    );
  });
}
