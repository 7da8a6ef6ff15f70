import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify';
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
 * field. Requests without a body (GET, DELETE, an empty POST) pass whatever their headers say, an empty
 * body under Content-Type: application/json included (taken as no body).
 */
export function installJsonBodyCheck(fastify: FastifyInstance): void {
  // The one JSON parser (Nest's is turned off: bodyParser false): application/json and structured +json
  // types (application/merge-patch+json for PATCH), with Fastify's poisoning checks, after a nesting
  // limit — JSON nested thousands deep overflowed the stack of the validators (a 500 and a stack trace).
  // `__proto__` and `constructor` keys are kept as the own properties JSON.parse makes them: they are valid
  // label keys and env names, and the validation pipe's shieldBody refuses them where they are not data.
  const parse = fastify.getDefaultJsonParser('ignore', 'ignore');
  const parser: FastifyBodyParser<string | Buffer> = (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // An empty body is no body, whatever the header says (generic HTTP clients send Content-Type:
    // application/json on a DELETE too): a route that needs one reports its required fields, as for a
    // request without a body. Fastify's parser refused it (400 "Body cannot be empty"), so such a cancel failed.
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      const message = `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`;
      done(new AppError('VALIDATION_FAILED', `the JSON body ${message}`, [{ field: '(body)', message }]), undefined);
      return;
    }
    void parse(request, text, done);
  };
  fastify.removeContentTypeParser('application/json'); // Fastify's built-in one, which a regex would not override
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parser);
  fastify.addContentTypeParser(/^application\/[\w.-]+\+json\s*(?:;|$)/i, { parseAs: 'string' }, parser);
  // Any other type reaches a parser only without a body (the hook below refuses the rest): nothing to parse.
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
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

/** Most levels of nested arrays and objects a request body may have (a job needs 3). */
export const MAX_JSON_DEPTH = 64;

/** Whether JSON text nests arrays/objects deeper than `max` (one pass; brackets inside strings do not count). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
