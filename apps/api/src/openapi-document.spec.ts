import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import canonicalize from 'canonicalize';
import type { OpenApiAudience } from './openapi-audience';
import {
  generateOpenApiDocuments,
  OPENAPI_DOCUMENT_PATHS,
  OPENAPI_REGENERATE_COMMAND,
} from './openapi-document';

const ROOT = resolve(__dirname, '../../..');

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: { example?: unknown } }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<
    string,
    { content?: Record<string, { schema?: unknown; example?: unknown; examples?: Record<string, unknown> }> }
  >;
}

function operationsOf(document: OpenAPIObject): Array<[string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(
      ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation],
    ),
  );
}

/** JSON pointers where two documents differ (at most `limit`), for a readable failure. */
function differences(a: unknown, b: unknown, pointer = '', limit = 15, found: string[] = []): string[] {
  if (found.length >= limit) return found;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    if (canonicalize(a) !== canonicalize(b)) found.push(pointer || '/');
    return found;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    differences(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
      limit,
      found,
    );
  }
  return found;
}

describe('the committed OpenAPI documents', () => {
  let documents: Record<OpenApiAudience, OpenAPIObject>;
  let generated: OpenAPIObject;

  beforeAll(async () => {
    documents = await generateOpenApiDocuments();
    generated = documents.customer;
  });

  it.each(['customer', 'operator'] as const)(
    `the %s document matches the code (regenerate with \`${OPENAPI_REGENERATE_COMMAND}\`)`,
    (audience) => {
      const path = OPENAPI_DOCUMENT_PATHS[audience];
      let committedText: string;
      try {
        committedText = readFileSync(resolve(ROOT, path), 'utf8');
      } catch {
        throw new Error(`${path} is missing: run \`${OPENAPI_REGENERATE_COMMAND}\` and commit it.`);
      }
      const committed = JSON.parse(committedText) as unknown;
      if (canonicalize(committed) !== canonicalize(documents[audience])) {
        throw new Error(
          `${path} differs from the document the code generates. Run ` +
            `\`${OPENAPI_REGENERATE_COMMAND}\` (rewrites it and the SDK's generated client) and commit ` +
            `both.\nFirst differences (JSON pointers):\n  ${differences(committed, documents[audience]).join('\n  ')}`,
        );
      }
    },
  );

  it('shows customers their API only: no /admin, /metrics or health probes, no admin scheme', () => {
    const customerPaths = Object.keys(documents.customer.paths);
    expect(customerPaths.length).toBeGreaterThan(10);
    expect(customerPaths.filter((path) => !path.startsWith('/v1/'))).toEqual([]);
    expect(Object.keys(documents.customer.components?.securitySchemes ?? {})).toEqual(['bearer']);
    expect(JSON.stringify(documents.customer)).not.toMatch(/ADMIN_API_TOKEN|x-ledgerkey-/);

    expect(Object.keys(documents.operator.paths).sort()).toEqual(
      expect.arrayContaining(['/admin/companies', '/health/live', '/health/ready', '/metrics']),
    );
    // The one /v1 route for operators: the payment provider's webhooks (called by the provider, no key).
    expect(Object.keys(documents.operator.paths).filter((path) => path.startsWith('/v1/'))).toEqual([
      '/v1/providers/{provider}/events',
    ]);
    expect(Object.keys(documents.customer.paths)).not.toContain('/v1/providers/{provider}/events');
    expect(Object.keys(documents.operator.components?.securitySchemes ?? {})).toEqual(['admin']);
    // Each schema where it is used: the company's DTOs only for operators.
    expect(Object.keys(documents.customer.components?.schemas ?? {})).not.toContain('CreateCompanyDto');
    expect(Object.keys(documents.operator.components?.schemas ?? {})).toContain('CreateCompanyDto');
  });

  it.each(['customer', 'operator'] as const)(
    'the %s document declares security on every operation (`security: []` only where no key is taken), a server and a licence',
    (audience) => {
      const document = documents[audience];
      const undeclared = operationsOf(document)
        .filter(([, operation]) => !Array.isArray(operation.security))
        .map(([name]) => name);
      expect(undeclared).toEqual([]);
      const publicOperations = operationsOf(document)
        .filter(([, operation]) => operation.security?.length === 0)
        .map(([name]) => name)
        .sort();
      expect(publicOperations).toEqual(
        audience === 'customer'
          ? []
          : ['GET /health/live', 'GET /health/ready', 'GET /metrics', 'POST /v1/providers/{provider}/events'],
      );
      expect(document.servers?.length).toBeGreaterThan(0);
      expect(document.info.license?.name).toBeTruthy();
      for (const [name, operation] of operationsOf(document)) {
        expect({ name, has4xx: Object.keys(operation.responses).some((s) => s.startsWith('4')) }).toEqual({
          name,
          has4xx: true,
        });
      }
    },
  );

  it('gives every operation an id, a success schema and problem+json errors with examples', () => {
    const problems: string[] = [];
    const ids = new Set<string>();
    for (const [name, operation] of [
      ...operationsOf(documents.customer),
      ...operationsOf(documents.operator),
    ]) {
      if (!operation.operationId) problems.push(`${name}: no operationId`);
      else if (ids.has(operation.operationId)) problems.push(`${name}: duplicate operationId`);
      else ids.add(operation.operationId);
      if (/Controller_/.test(operation.operationId ?? ''))
        problems.push(`${name}: operationId generated by Nest, set one with @ApiOperation`);

      const statuses = Object.keys(operation.responses).map(Number);
      const successes = statuses.filter((status) => status >= 200 && status < 300);
      if (successes.length === 0) problems.push(`${name}: no success response`);
      for (const status of successes) {
        const content = operation.responses[status].content ?? {};
        if (!Object.values(content).some((media) => media.schema))
          problems.push(`${name}: ${status} has no schema`);
      }
      for (const status of statuses.filter((s) => s >= 400)) {
        const media = operation.responses[status].content?.['application/problem+json'];
        if (!media?.schema) problems.push(`${name}: ${status} has no problem+json schema`);
        if (!media?.examples || Object.keys(media.examples).length === 0)
          problems.push(`${name}: ${status} has no example`);
      }
      if (!statuses.includes(500)) problems.push(`${name}: no 500 answer`);
      if (operation.requestBody && !operation.requestBody.content?.['application/json']?.schema)
        problems.push(`${name}: request body without a JSON schema`);
    }
    expect(problems).toEqual([]);
  });

  it('documents the Idempotency-Key header, replay headers and 400/409/422 on every create', () => {
    const creates = operationsOf(generated).filter(
      ([name]) => name.startsWith('POST /v1/') && name.endsWith('/create'),
    );
    expect(creates.length).toBeGreaterThanOrEqual(4);
    for (const [name, operation] of creates) {
      const header = operation.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect({ name, required: header?.required }).toEqual({ name, required: true });
      expect({ name, statuses: Object.keys(operation.responses) }).toEqual({
        name,
        statuses: expect.arrayContaining(['400', '409', '422']),
      });
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1] as {
        headers?: Record<string, unknown>;
      };
      expect(Object.keys(success.headers ?? {})).toEqual(
        expect.arrayContaining(['Idempotent-Replayed', 'Idempotency-Key-Expires']),
      );
    }
    expect(generated.components?.schemas?.ProblemDetails).toMatchObject({
      required: expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'requestId']),
    });
  });
});
