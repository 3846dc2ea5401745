import { applyDecorators } from '@nestjs/common';
import { ApiExtension, type OpenAPIObject } from '@nestjs/swagger';

/**
 * Who an operation is documented for. `customer`: the document at /docs/openapi.json, the Swagger
 * UI at /docs and the SDK (docs/openapi.json). `operator`: /docs/operator/openapi.json and
 * docs/openapi-operator.json — /admin, health probes, metrics. Every operation is a customer's
 * unless its controller (or the route) says `@ApiOperatorOnly()`, so a route added later lands in
 * exactly one document without a list of paths to maintain.
 */
export type OpenApiAudience = 'customer' | 'operator';

/** Marks for the document builder; `splitByAudience` removes them from both documents. */
export const AUDIENCE_EXTENSION = 'x-ledgerkey-audience';
export const PUBLIC_EXTENSION = 'x-ledgerkey-public';

/** The controller's (or route's) operations are for operators: left out of the customer document. */
export function ApiOperatorOnly(): ClassDecorator & MethodDecorator {
  return applyDecorators(ApiExtension(AUDIENCE_EXTENSION, 'operator'));
}

/**
 * The operation takes no credentials: documented with `security: []` (a route with neither this
 * nor an `@ApiBearerAuth` fails the document test).
 */
export function ApiPublic(): ClassDecorator & MethodDecorator {
  return applyDecorators(ApiExtension(PUBLIC_EXTENSION, true));
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = Record<string, unknown> & { security?: Array<Record<string, string[]>>; tags?: string[] };

/**
 * One document per audience from the document of every route: each keeps its own operations, the
 * schemas, security schemes and tags they reference (nothing unused), and turns `@ApiPublic()`
 * into `security: []`. The marks themselves appear in neither.
 */
export function splitByAudience(all: OpenAPIObject): Record<OpenApiAudience, OpenAPIObject> {
  return { customer: selectAudience(all, 'customer'), operator: selectAudience(all, 'operator') };
}

function selectAudience(all: OpenAPIObject, audience: OpenApiAudience): OpenAPIObject {
  const document = structuredClone(all);
  for (const [path, pathItem] of Object.entries(document.paths)) {
    const item = pathItem as Record<string, Operation | undefined>;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if ((operation[AUDIENCE_EXTENSION] ?? 'customer') !== audience) {
        delete item[method];
        continue;
      }
      delete operation[AUDIENCE_EXTENSION];
      if (operation[PUBLIC_EXTENSION] === true) operation.security = [];
      delete operation[PUBLIC_EXTENSION];
    }
    if (!HTTP_METHODS.some((method) => item[method])) delete document.paths[path];
  }
  pruneUnused(document);
  return document;
}

function operationsOf(document: OpenAPIObject): Operation[] {
  return Object.values(document.paths).flatMap((item) =>
    HTTP_METHODS.map((method) => (item as Record<string, Operation | undefined>)[method]).filter(
      (operation): operation is Operation => operation !== undefined,
    ),
  );
}

function pruneUnused(document: OpenAPIObject): void {
  const components = document.components ?? {};
  const schemes = components.securitySchemes;
  if (schemes) {
    const used = new Set(operationsOf(document).flatMap((op) => (op.security ?? []).flatMap(Object.keys)));
    for (const name of Object.keys(schemes)) if (!used.has(name)) delete schemes[name];
  }
  if (document.tags) {
    const used = new Set(operationsOf(document).flatMap((op) => op.tags ?? []));
    document.tags = document.tags.filter((tag) => used.has(tag.name));
  }
  const schemas = components.schemas;
  if (schemas) {
    // Schemas reachable from the paths, through schemas that reference other schemas.
    const reachable = new Set<string>();
    const pending = [...schemaRefsIn(document.paths)];
    while (pending.length > 0) {
      const name = pending.pop()!;
      if (reachable.has(name) || !schemas[name]) continue;
      reachable.add(name);
      pending.push(...schemaRefsIn(schemas[name]));
    }
    for (const name of Object.keys(schemas)) if (!reachable.has(name)) delete schemas[name];
  }
}

const SCHEMA_REF = /"#\/components\/schemas\/([^"]+)"/g;

function schemaRefsIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(SCHEMA_REF)].map((match) => decodeURIComponent(match[1]));
}
