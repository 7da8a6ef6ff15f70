import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Quartermaster API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/docs/openapi.json', dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout', persistAuthorization: false });</script>
</body></html>`;

/**
 * GET /docs/openapi.json (generated from the controllers and DTOs) and GET /docs (Swagger UI). The UI's
 * few assets are served from swagger-ui-dist directly (no @fastify/static), public like the document. A token
 * pasted into its Authorize dialog lives as long as the page: never persisted to localStorage, where any
 * script of the origin could read it long after the browser closed.
 */
export function setupOpenApi(app: INestApplication): void {
  const document = openApiDocument(app);
  SwaggerModule.setup('docs', app, document, { swaggerUiEnabled: false, raw: ['json'], jsonDocumentUrl: 'docs/openapi.json' });

  const assetsDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get('/docs', (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  fastify.get<{ Params: { file: string } }>('/docs/assets/:file', async (req, reply) => {
    const type = ASSETS[req.params.file];
    if (type === undefined) return reply.status(404).type('application/problem+json').send({ type: 'about:blank', title: 'Not found', status: 404, detail: 'no such asset', errors: [] });
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(await readFile(join(assetsDir, req.params.file)));
  });
}

/**
 * The API's contract, generated from the controllers and DTOs: what /docs/openapi.json serves, and what
 * `npm run api:contract` writes into libs/api-client (the CLI's and the console's types come from it).
 */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Quartermaster API')
    .setDescription('GPU-cluster scheduler and quota service. Errors are application/problem+json (RFC 9457).')
    .setVersion('v1')
    .addBearerAuth()
    .build();
  return SwaggerModule.createDocument(app, config);
}
