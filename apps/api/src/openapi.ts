import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

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
  return SwaggerModule.createDocument(app, config);
}

/** Swagger UI at /docs and the document at /docs/openapi.json, served locally (no CDN). */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'ledgerkey API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
  });
}
