import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateOpenApiDocument, OPENAPI_DOCUMENT_PATH, serializeOpenApiDocument } from './openapi-document';

/** `npm run openapi`: writes the OpenAPI document generated from the code (no database needed). */
async function main(target = OPENAPI_DOCUMENT_PATH): Promise<void> {
  const document = await generateOpenApiDocument();
  const path = resolve(process.cwd(), target);
  writeFileSync(path, serializeOpenApiDocument(document));
  const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
  process.stdout.write(`wrote ${target} (${operations} operations)\n`);
}

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(
    `openapi export failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
