import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { loadConfig } from './config';
import { buildOpenApiDocuments } from './openapi';
import type { OpenApiAudience } from './openapi-audience';

/**
 * The committed artifacts, relative to the repository root; `npm run openapi` writes them. The SDK
 * is generated from the customer document.
 */
export const OPENAPI_DOCUMENT_PATHS: Record<OpenApiAudience, string> = {
  customer: 'docs/openapi.json',
  operator: 'docs/openapi-operator.json',
};
export const OPENAPI_REGENERATE_COMMAND = 'npm run openapi';

/**
 * The OpenAPI documents exactly as `/docs/openapi.json` and `/docs/operator/openapi.json` serve
 * them, built without a database: Nest's preview mode resolves the module graph and reads the route
 * metadata but calls no constructor or factory, so no pool connects (the URL below is
 * never dialled).
 */
export async function generateOpenApiDocuments(): Promise<Record<OpenApiAudience, OpenAPIObject>> {
  const config = loadConfig({ LOG_LEVEL: 'error', SEED_DEMO_COMPANY: 'false' });
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, { url: 'postgres://openapi-preview.invalid/ledgerkey', embedded: undefined }),
    { preview: true, logger: false, abortOnError: false, bodyParser: false },
  );
  try {
    return buildOpenApiDocuments(app);
  } finally {
    await app.close();
  }
}

/** The file's bytes: two-space JSON in the document's own key order, with a final newline. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
