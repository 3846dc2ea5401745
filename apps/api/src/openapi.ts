import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { type OpenApiAudience, splitByAudience } from './openapi-audience';
import { documentResponses, PROBLEM_SCHEMA_MODELS } from './openapi-responses';

const DESCRIPTIONS: Record<OpenApiAudience, { title: string; description: string }> = {
  customer: {
    title: 'ledgerkey API',
    description:
      'Invoicing API that makes retries safe end to end. Every `create` operation takes an ' +
      '`Idempotency-Key`: retry it with the same key and body as often as the network ' +
      'forces you to, and the books change once. Errors are RFC 9457 problem details with a ' +
      'stable `code`.\n\n' +
      '**Money** is an integer count of the currency minor unit (cents for EUR): `5000` is ' +
      '50.00 EUR, `12100` is 121.00 EUR. A decimal such as `50.00` is refused, never read as 50 cents.',
  },
  operator: {
    title: 'ledgerkey operator API',
    description:
      'For the people who run ledgerkey, not for its customers: creating companies (`/admin`, ' +
      'enabled by ADMIN_API_TOKEN), health probes and Prometheus metrics. Serve `/metrics` to the ' +
      'scraper only. The customer-facing API is documented at `/docs/openapi.json`.',
  },
};

/** package.json's `UNLICENSED`: no public licence text exists to link to (see redocly.yaml). */
const LICENSE = { name: 'Proprietary (UNLICENSED): all rights reserved' };

/**
 * The document of every route, then one per audience (`@ApiOperatorOnly()` marks the operator's):
 * the customer document is what `/docs` shows and the SDK is generated from.
 */
export function buildOpenApiDocuments(app: INestApplication): Record<OpenApiAudience, OpenAPIObject> {
  const config = new DocumentBuilder()
    .setVersion('1')
    // Relative: the server that serves the document (Swagger UI calls the origin it was loaded from).
    .addServer('/', 'The server that serves this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Your company API key' })
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_API_TOKEN' }, 'admin')
    .build();
  const all = documentResponses(
    SwaggerModule.createDocument(app, config, { extraModels: PROBLEM_SCHEMA_MODELS }),
  );
  const documents = splitByAudience(all);
  for (const audience of Object.keys(documents) as OpenApiAudience[]) {
    documents[audience].info = { ...documents[audience].info, ...DESCRIPTIONS[audience], license: LICENSE };
  }
  return documents;
}

/** Served at /docs/ledgerkey-swagger-ui.js to both UIs: the key control and the replay banner. */
const UI_PLUGIN_PATH = '/docs/ledgerkey-swagger-ui.js';
const UI_PLUGIN_FILE = join(__dirname, 'swagger-ui', 'ledgerkey-swagger-ui.js');

/**
 * Swagger UI at /docs with the customer document at /docs/openapi.json, and the operator's at
 * /docs/operator and /docs/operator/openapi.json; served locally (no CDN). Authorization persists
 * across reloads (local storage). The UI's copy of a document, and only that copy, gets a fresh
 * UUID as the Idempotency-Key example on every page load, which "Try it out" pre-fills: executing
 * again replays, "New key" (the plugin) or typing another key makes a new operation.
 */
export function setupOpenApi(app: INestApplication): void {
  let documents: Record<OpenApiAudience, OpenAPIObject> | undefined;
  const documentFor = (audience: OpenApiAudience) => () =>
    (documents ??= buildOpenApiDocuments(app))[audience];
  const plugin = readFileSync(UI_PLUGIN_FILE, 'utf8');
  app
    .getHttpAdapter()
    .get(UI_PLUGIN_PATH, (_request: Request, response: Response) =>
      response.type('text/javascript').set('Cache-Control', 'no-cache').send(plugin),
    );
  const setup = (path: string, audience: OpenApiAudience) =>
    SwaggerModule.setup(path, app, documentFor(audience), {
      jsonDocumentUrl: `${path}/openapi.json`,
      yamlDocumentUrl: `${path}/openapi.yaml`,
      customSiteTitle: DESCRIPTIONS[audience].title,
      customJs: UI_PLUGIN_PATH,
      swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
      patchDocumentOnRequest: (request, _response, document) =>
        (request as Request).path.endsWith('/swagger-ui-init.js')
          ? withFreshIdempotencyKeyExamples(document)
          : document,
    });
  setup('docs', 'customer');
  setup('docs/operator', 'operator');
}

function withFreshIdempotencyKeyExamples(document: OpenAPIObject): OpenAPIObject {
  const copy = structuredClone(document);
  for (const pathItem of Object.values(copy.paths)) {
    for (const operation of Object.values(pathItem) as Array<{ parameters?: unknown[] }>) {
      for (const parameter of operation?.parameters ?? []) {
        const header = parameter as { name?: string; in?: string; schema?: { example?: unknown } };
        if (header.in === 'header' && header.name === 'Idempotency-Key' && header.schema) {
          header.schema.example = randomUUID();
        }
      }
    }
  }
  return copy;
}
