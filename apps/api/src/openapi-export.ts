import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  generateOpenApiDocuments,
  OPENAPI_DOCUMENT_PATHS,
  serializeOpenApiDocument,
} from './openapi-document';
import type { OpenApiAudience } from './openapi-audience';

/** `npm run openapi`: writes the OpenAPI documents generated from the code (no database needed). */
async function main(): Promise<void> {
  const documents = await generateOpenApiDocuments();
  for (const audience of Object.keys(documents) as OpenApiAudience[]) {
    const document = documents[audience];
    const target = OPENAPI_DOCUMENT_PATHS[audience];
    writeFileSync(resolve(process.cwd(), target), serializeOpenApiDocument(document));
    const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
    process.stdout.write(`wrote ${target} (${audience}, ${operations} operations)\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `openapi export failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
