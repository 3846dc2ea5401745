import { ApiProperty, ApiPropertyOptional, ApiSchema, type OpenAPIObject } from '@nestjs/swagger';
import { PROBLEM_KINDS, PROBLEM_TYPE_BASE, type ProblemCode } from './problem-details';

const PROBLEM_CODES = Object.keys(PROBLEM_KINDS) as ProblemCode[];
const PROBLEM_MEDIA_TYPE = 'application/problem+json';
const PROBLEM_SCHEMA_REF = '#/components/schemas/ProblemDetails';

@ApiSchema({ name: 'ProblemFieldError' })
export class ProblemFieldErrorView {
  @ApiProperty({ example: 'lines[0].quantity' }) field: string;
  @ApiProperty({ example: 'must be a decimal string greater than 0 with at most 4 decimals' })
  message: string;
}

/** RFC 9457 problem details, as the problem+json filter renders every error. */
@ApiSchema({
  name: 'ProblemDetails',
  description:
    'RFC 9457 problem details (`application/problem+json`). Branch on `code`, which is stable; ' +
    '`title` and `detail` are for people.',
})
export class ProblemDetailsView {
  @ApiProperty({ format: 'uri', example: `${PROBLEM_TYPE_BASE}validation_failed` }) type: string;
  @ApiProperty({ example: 'Request validation failed' }) title: string;
  @ApiProperty({ type: 'integer', example: 400 }) status: number;
  @ApiProperty({ example: 'lines[0].quantity: must be a decimal string greater than 0' }) detail: string;
  @ApiProperty({ enum: PROBLEM_CODES, enumName: 'ProblemCode', example: 'validation_failed' })
  code: ProblemCode;
  @ApiProperty({ description: 'Also sent as the `X-Request-Id` header', example: 'req_3f1c0a7e' })
  requestId: string;
  @ApiPropertyOptional({
    type: [ProblemFieldErrorView],
    description:
      'Always with `validation_failed`. `field` is a body path (`lines[0].quantity`), a query ' +
      'parameter (`limit`), a path parameter (`id`), `body` for the body as a whole, or `request` ' +
      'when nothing narrower applies.',
  })
  errors?: ProblemFieldErrorView[];
  @ApiPropertyOptional({ format: 'uuid', description: 'With `order_already_invoiced`' })
  existingInvoiceId?: string;
  @ApiPropertyOptional({ format: 'uuid', description: 'With `payout_already_settled`' })
  existingSettlementId?: string;
  @ApiPropertyOptional({ format: 'uuid', description: 'With `purchase_invoice_duplicate`' })
  existingPurchaseInvoiceId?: string;
  @ApiPropertyOptional({ format: 'uuid', description: 'With `depreciation_already_run`' })
  existingRunId?: string;
  @ApiPropertyOptional({ type: [String], description: 'With `isaf_tax_code_missing`: the unmapped rates' })
  vatRates?: string[];
}

export const PROBLEM_SCHEMA_MODELS = [ProblemDetailsView, ProblemFieldErrorView];

const EXAMPLE_REQUEST_ID = 'req_3f1c0a7e';
const EXAMPLE_ID = '9b2e4c1a-5d3f-4e8a-9c7b-1f2e3d4c5b6a';

/** A representative detail (and documented extension fields) per code, for the examples. */
const EXAMPLE_EXTRAS: Partial<Record<ProblemCode, Record<string, unknown>>> = {
  validation_failed: {
    detail: 'lines[0].quantity: must be a decimal string greater than 0 with at most 4 decimals',
    errors: [
      {
        field: 'lines[0].quantity',
        message: 'must be a decimal string greater than 0 with at most 4 decimals',
      },
    ],
  },
  malformed_json: { detail: 'The request body is not valid JSON.' },
  idempotency_key_missing: { detail: 'The Idempotency-Key header is required for this operation.' },
  idempotency_key_invalid: {
    detail: 'The Idempotency-Key header is invalid: at most 255 visible ASCII characters.',
  },
  unauthorized: { detail: 'A valid API key is required: send "Authorization: Bearer <api key>".' },
  forbidden: {
    detail: 'This API key is read_only: it may read, but not create, change or revoke anything.',
  },
  not_found: { detail: 'No such resource.' },
  last_read_write_key: {
    detail: `API key ${EXAMPLE_ID} is the company's last active read_write key: create another read_write key first, then revoke this one.`,
  },
  rate_limited: { detail: 'Too many requests; retry after 1 s.' },
  idempotency_key_in_use: {
    detail: 'A request with this Idempotency-Key is still being processed, retry shortly.',
  },
  order_already_invoiced: {
    detail: `Order order-1041 is already invoiced by invoice ${EXAMPLE_ID}.`,
    existingInvoiceId: EXAMPLE_ID,
  },
  payout_already_settled: {
    detail: `Payout po_1NxY is already settled by settlement ${EXAMPLE_ID}.`,
    existingSettlementId: EXAMPLE_ID,
  },
  purchase_invoice_duplicate: {
    detail: 'Supplier document 2026-117 of LT100009876543 is already recorded.',
    existingPurchaseInvoiceId: EXAMPLE_ID,
  },
  depreciation_already_run: {
    detail: `Period 2026-11 was already depreciated by run ${EXAMPLE_ID}.`,
    existingRunId: EXAMPLE_ID,
  },
  company_profile_incomplete: {
    detail:
      'i.SAF names the company by its registration number (1–11 digits): set `registrationNumber` with ' +
      'POST /v1/company/profile/update.',
  },
  isaf_tax_code_missing: {
    detail:
      'No i.SAF tax code is configured for VAT rate(s) 0 %: set them with POST /v1/company/isaf-settings/update.',
    vatRates: ['0'],
  },
  isaf_currency_unsupported: {
    detail:
      'i.SAF amounts are in EUR; the month has documents in USD, which this service does not convert. ' +
      'Declare them from another source.',
  },
  asset_period_closed: {
    detail: 'Depreciation has been run up to 2026-11: an asset created now starts in 2026-12 or later.',
  },
  idempotency_key_reused: { detail: 'Idempotency-Key was already used with a different request payload.' },
  idempotency_replay_unavailable: {
    detail:
      'The request with this Idempotency-Key completed, but its stored answer contained a secret that ' +
      'this server can no longer decrypt, so it cannot be replayed.',
  },
  amount_exceeds_outstanding: {
    detail:
      'A payment of 13000 exceeds what invoice INV-000001 has outstanding: 12100 (gross 12100 − credited 0 − ' +
      'paid 0 − payments still processing 0).',
  },
  invoice_fully_credited: { detail: 'Invoice INV-000001 is fully credited: there is nothing to pay.' },
  currency_mismatch: { detail: 'Invoice INV-000001 is in EUR; it cannot be paid in USD.' },
  payment_provider_unavailable: {
    detail: 'No payment provider is configured for this server; nothing was charged.',
  },
  internal_error: { detail: 'An unexpected error occurred; it has been logged.' },
  service_unavailable: { detail: 'The database is not reachable; retry shortly.' },
};

/** The code documented by default for a status when a response's description names none. */
const DEFAULT_CODE: Record<number, ProblemCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'idempotency_key_in_use',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable',
};

export function problemExample(code: ProblemCode): Record<string, unknown> {
  const kind = PROBLEM_KINDS[code];
  return {
    type: PROBLEM_TYPE_BASE + code,
    title: kind.title,
    status: kind.status,
    detail: kind.title,
    code,
    requestId: EXAMPLE_REQUEST_ID,
    ...EXAMPLE_EXTRAS[code],
  };
}

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown; example?: unknown; examples?: Record<string, unknown> }>;
}

interface OperationObject {
  parameters?: Array<{ in?: string; name?: string }>;
  requestBody?: unknown;
  security?: unknown[];
  responses: Record<string, ResponseObject>;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Documents the idempotency headers of every create's success, and makes every error answer of every operation concrete: the `ProblemDetails` schema under
 * `application/problem+json` with one named example per problem code the response's
 * description names (or the status's usual code), plus the answers every route can give —
 * 400 where it takes input, 401 where it needs a key, 500 and 503 everywhere. Routes keep their own
 * descriptions; nothing about a route has to be repeated in its controller.
 */
export function documentResponses(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (pathItem as Record<string, OperationObject | undefined>)[method];
      if (!operation) continue;
      addCommonErrors(operation, method);
      if (isIdempotent(operation)) documentIdempotentSuccess(operation);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400) describeProblem(Number(status), response);
      }
    }
  }
  return document;
}

function isIdempotent(operation: OperationObject): boolean {
  return (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
}

/** The headers that tell a client what happened to its key, on every success of a create. */
function documentIdempotentSuccess(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (Number(status) < 200 || Number(status) >= 300) continue;
    if (Number(status) === 202) {
      // Not stored, so neither replayed nor expiring: the key stays unfinished.
      response.headers = {
        ...response.headers,
        Location: { description: 'The resource, to poll', schema: { type: 'string' } },
      };
      continue;
    }
    response.headers = {
      ...response.headers,
      'Idempotent-Replayed': {
        description: '`true` when this is the stored answer of an earlier request with the same key and body',
        schema: { type: 'string', enum: ['true'] },
      },
      'Idempotency-Key-Expires': {
        description:
          'Until when (HTTP date) a retry with this key replays this answer (on the first answer and its replays)',
        schema: { type: 'string', example: 'Tue, 01 Dec 2026 12:00:00 GMT' },
      },
      Location: { description: 'The created resource', schema: { type: 'string' } },
    };
  }
}

function addCommonErrors(operation: OperationObject, method: string): void {
  const { responses } = operation;
  const takesInput =
    operation.requestBody !== undefined || (operation.parameters ?? []).some((p) => p.in === 'query');
  if (takesInput && !responses['400']) {
    responses['400'] = { description: 'The request is invalid (`validation_failed`). Nothing is stored.' };
  }
  if ((operation.security ?? []).length > 0 && !responses['401']) {
    responses['401'] = { description: 'Missing or unknown credentials (`unauthorized`)' };
  }
  if (usesApiKey(operation) && method !== 'get' && !responses['403']) {
    responses['403'] = { description: '`forbidden`: the request was made with a `read_only` key' };
  }
  if (usesApiKey(operation) && !responses['429']) {
    responses['429'] = {
      description:
        'Over the rate limit (`rate_limited`): the company’s (RATE_LIMIT_PER_SECOND, bursts up to twice ' +
        'that), or the client address’s for requests whose key is not (yet) verified. Nothing ran and ' +
        'nothing is stored under the Idempotency-Key: retry with the same key after `Retry-After`. Every ' +
        'answer of this route carries the RateLimit headers.',
      headers: RATE_LIMIT_HEADERS,
    };
  }
  if (!Object.keys(responses).some((status) => status.startsWith('4'))) {
    // An operation that takes no input still parses a body sent to it (every route shares the parser).
    responses['400'] = {
      description: 'A body was sent and is not JSON (`malformed_json`); this operation takes none.',
    };
  }
  if (!responses['500']) {
    responses['500'] = {
      description:
        'Unexpected failure (`internal_error`): nothing was committed, the body names no internals. ' +
        'Safe to retry with the same Idempotency-Key.',
    };
  }
  if (!responses['503']) {
    responses['503'] = {
      description:
        'The database is unreachable, or could not complete the request in time: a lock wait past the ' +
        'statement timeout, a serialization failure or a deadlock (`service_unavailable`, with ' +
        '`Retry-After`). Nothing was committed or stored under the key: retry with the same Idempotency-Key.',
      headers: {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
    };
  }
}

const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds until a retry can be admitted', schema: { type: 'integer' } },
  'RateLimit-Limit': {
    description: 'Requests this server process admits in a burst (its share of the limit)',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in the burst', schema: { type: 'integer' } },
  'RateLimit-Reset': {
    description: 'Seconds until the burst is fully available again',
    schema: { type: 'integer' },
  },
};

/** Routes behind `ApiKeyGuard` (security scheme `bearer`), which rate limits them. */
function usesApiKey(operation: OperationObject): boolean {
  return (operation.security ?? []).some((requirement) => Object.hasOwn(requirement as object, 'bearer'));
}

function describeProblem(status: number, response: ResponseObject): void {
  const named = [...response.description.matchAll(/`([a-z_]+)`/g)]
    .map((match) => match[1] as ProblemCode)
    .filter((code) => PROBLEM_KINDS[code]?.status === status);
  // A response may name its main code as `example: { code }` (the idempotency decorator does):
  // that code's example comes first; every example is rendered here, with our problem type URLs.
  const existing = response.content?.[PROBLEM_MEDIA_TYPE]?.example as { code?: ProblemCode } | undefined;
  const codes = new Set<ProblemCode>();
  if (existing?.code && PROBLEM_KINDS[existing.code]) codes.add(existing.code);
  for (const code of named) codes.add(code);
  const fallback = DEFAULT_CODE[status];
  if (codes.size === 0 && fallback) codes.add(fallback);

  const examples: Record<string, { summary: string; value: unknown }> = {};
  for (const code of codes) {
    examples[code] = {
      summary: PROBLEM_KINDS[code].title,
      value: problemExample(code),
    };
  }
  response.content = {
    [PROBLEM_MEDIA_TYPE]: {
      schema: { $ref: PROBLEM_SCHEMA_REF },
      ...(codes.size > 0 ? { examples } : {}),
    },
  };
}
