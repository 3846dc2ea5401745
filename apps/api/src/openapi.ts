import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request } from 'express';
import { documentResponses, PROBLEM_SCHEMA_MODELS } from './openapi-responses';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('ledgerkey API')
    .setDescription(
      'Invoicing API that makes retries safe end to end. Every `create` operation takes an ' +
        '`Idempotency-Key`: retry it with the same key and body as often as the network ' +
        'forces you to, and the books change once. Errors are RFC 9457 problem details with a ' +
        'stable `code`. Money is an integer in the currency minor unit.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Your company API key' })
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_API_TOKEN' }, 'admin')
    .build();
  return documentResponses(SwaggerModule.createDocument(app, config, { extraModels: PROBLEM_SCHEMA_MODELS }));
}

/**
 * Swagger UI at /docs and the document at /docs/openapi.json, served locally (no CDN).
 * Authorization persists across reloads (local storage). The UI's copy of the document, and
 * only that copy, gets a fresh UUID as the Idempotency-Key example on every page load, which
 * "Try it out" pre-fills: executing again replays, overwriting the key makes a new operation.
 */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'ledgerkey API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
    patchDocumentOnRequest: (request, _response, document) =>
      (request as Request).path.endsWith('/swagger-ui-init.js')
        ? withFreshIdempotencyKeyExamples(document)
        : document,
  });
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
