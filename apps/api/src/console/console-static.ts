import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, PROBLEM_CONTENT_TYPE, problemOf } from '#common';
import { type ConsoleFile, loadConsoleFiles } from './console-files.js';

export const CONSOLE_PREFIX = '/ui';

/**
 * Content-Security-Policy of the console: its own scripts and styles only, API calls to the same origin,
 * no frames. Chart.js draws on canvas; Preact sets styles through the CSSOM, which CSP allows.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves the built web console at /ui (GET and HEAD, no token: the page signs in with one itself).
 * - /ui/assets/* (content-hashed names): `Cache-Control: public, max-age=31536000, immutable`.
 * - index.html, and every other /ui path without a file extension (the console's own routes, e.g.
 *   /ui/jobs/<id>): index.html with `Cache-Control: no cache`, so a new build is picked up at once.
 * - Unknown files (a path with an extension, or under assets/) → 404 problem+json, never HTML in place
 *   of a script.
 * ETag / If-None-Match → 304; gzip or brotli when the client accepts it (compressed by the build; see
 *   console-files.ts).
 * When the console was not built (`npm run build` builds it), /ui answers 404 saying so.
 */
export function installConsole(fastify: FastifyInstance, dir: string): void {
  const files = loadConsoleFiles(dir)?.files ?? null;
  const handler = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = decodePath(request.url);
    if (files === null)
      return problem(
        reply,
        `the web console is not built in this installation (looked in ${dir}); run npm run build`,
      );
    if (path === null) return problem(reply, 'no such file in the web console');
    const name = path === '' ? 'index.html' : path;
    let file = files.get(name);
    if (file === undefined) {
      if (name.startsWith('assets/') || /\.[A-Za-z0-9]+$/.test(name))
        return problem(reply, `no such file in the web console: ${name}`);
      file = files.get('index.html');
    }
    return send(request, reply, file!);
  };
  fastify.get(CONSOLE_PREFIX, (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/`, 308));
  fastify.get(`${CONSOLE_PREFIX}/`, handler);
  fastify.get(`${CONSOLE_PREFIX}/*`, handler);
}

/** The path below /ui/ without query; null when it is malformed or climbs out (`..`). */
function decodePath(url: string): string | null {
  const raw = url.split('?', 1)[0]!.slice(CONSOLE_PREFIX.length + 1);
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (
    path.split('/').some((part) => part === '..' || part === '.') ||
    path.includes('\\') ||
    path.includes('\0')
  )
    return null;
  return path;
}

function send(request: FastifyRequest, reply: FastifyReply, file: ConsoleFile): FastifyReply {
  void reply.header('content-type', file.contentType);
  void reply.header('etag', file.etag);
  void reply.header('vary', 'accept-encoding');
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (file.contentType.startsWith('text/html')) {
    void reply.header('content-security-policy', CSP);
    void reply.header('referrer-policy', 'no-referrer');
    void reply.header('x-frame-options', 'DENY');
  }
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const accepts = String(request.headers['accept-encoding'] ?? '');
  if (file.brotli && /\bbr\b/.test(accepts)) return reply.header('content-encoding', 'br').send(file.brotli);
  if (file.gzip && /\bgzip\b/.test(accepts)) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}

function problem(reply: FastifyReply, detail: string): FastifyReply {
  return reply
    .code(404)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .header('cache-control', 'no-cache')
    .send(JSON.stringify(problemOf(new AppError('NOT_FOUND', detail))));
}
