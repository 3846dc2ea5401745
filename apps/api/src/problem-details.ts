import { HttpException } from '@nestjs/common';
import { isConnectionLoss, isTransientDatabaseFailure } from '@ledgerkey/database';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
export const PROBLEM_TYPE_BASE = 'https://docs.ledgerkey.dev/errors/';

interface ProblemKind {
  status: number;
  title: string;
}

/**
 * Every error code the API answers with, and its HTTP status. Exhaustive: an error whose
 * code is not here is a programming mistake and answers 500 internal_error.
 */
export const PROBLEM_KINDS = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key missing' },
  idempotency_key_invalid: { status: 400, title: 'Idempotency-Key invalid' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency-Key in use' },
  order_already_invoiced: { status: 409, title: 'Order already invoiced' },
  payout_already_settled: { status: 409, title: 'Payout already settled' },
  purchase_invoice_duplicate: { status: 409, title: 'Purchase invoice already recorded' },
  last_read_write_key: { status: 409, title: 'Last read_write API key' },
  idempotency_replay_unavailable: { status: 410, title: 'Stored answer cannot be replayed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused' },
  due_date_before_issue_date: { status: 422, title: 'Due date before issue date' },
  amount_out_of_range: { status: 422, title: 'Amount out of range' },
  credit_exceeds_invoice: { status: 422, title: 'Credit exceeds invoice' },
  credit_note_empty: { status: 422, title: 'Credit note is empty' },
  allocation_exceeds_outstanding: { status: 422, title: 'Allocation exceeds outstanding amount' },
  amount_exceeds_outstanding: { status: 422, title: 'Amount exceeds outstanding amount' },
  invoice_fully_credited: { status: 422, title: 'Invoice fully credited' },
  currency_mismatch: { status: 422, title: 'Currency mismatch' },
  webhook_url_forbidden: { status: 422, title: 'Webhook URL not allowed' },
  einvoice_not_representable: { status: 422, title: 'Not representable as a Peppol e-invoice' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  payment_provider_unavailable: { status: 503, title: 'Payment provider unavailable' },
} as const satisfies Record<string, ProblemKind>;

export type ProblemCode = keyof typeof PROBLEM_KINDS;

/** Fields an error may document beyond the standard ones (e.g. existingInvoiceId). */
const EXTENSION_FIELDS = [
  'existingInvoiceId',
  'existingSettlementId',
  'existingPurchaseInvoiceId',
  'errors',
  'problems',
] as const;

export interface RenderedProblem {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function isProblemCode(code: unknown): code is ProblemCode {
  return typeof code === 'string' && Object.hasOwn(PROBLEM_KINDS, code);
}

function httpExceptionCode(status: number): ProblemCode {
  switch (status) {
    case 404:
    case 405:
      return 'not_found';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'rate_limited';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    default:
      return status >= 500 ? 'internal_error' : 'validation_failed';
  }
}

/**
 * The database went away under a request (restart, failover), or aborted its statement for a
 * reason of the moment (a lock wait past `statement_timeout`, `lock_timeout`, a serialization
 * failure, a deadlock): the transaction rolled back, nothing lasts, and the same call may succeed
 * shortly, so clients are told to retry.
 */
class TransientDatabaseError extends Error {
  readonly code = 'service_unavailable';
  readonly retryAfterSeconds = 1;

  constructor(cause: unknown) {
    super(
      isConnectionLoss(cause)
        ? 'The database is not reachable; retry shortly.'
        : 'The database could not complete the request in time; retry shortly.',
      { cause },
    );
  }
}

/** The problem code of an error, or undefined when it is not an expected outcome. */
export function problemCodeOf(error: unknown): ProblemCode | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (isProblemCode(code)) return code;
  if (error instanceof HttpException) return httpExceptionCode(error.getStatus());
  if (isTransientDatabaseFailure(error)) return 'service_unavailable';
  return undefined;
}

/**
 * Renders an error as RFC 9457 problem details. Unknown errors become a bare 500 with no
 * message, stack or SQL. `detail` is the error's own message for expected outcomes only;
 * a transient database failure (lost connection, statement timeout, lock, serialization failure,
 * deadlock) answers 503 in our words, with `Retry-After`.
 */
export function renderProblem(thrown: unknown, requestId: string): RenderedProblem {
  const error = transientDatabaseFailure(thrown) ? new TransientDatabaseError(thrown) : thrown;
  const code = problemCodeOf(error) ?? 'internal_error';
  const kind: ProblemKind = PROBLEM_KINDS[code];
  const expected = kind.status < 500 || code === 'service_unavailable';
  const body: Record<string, unknown> = {
    type: PROBLEM_TYPE_BASE + code,
    title: kind.title,
    status: kind.status,
    detail: expected ? detailOf(error, code) : 'An unexpected error occurred; it has been logged.',
    code,
    requestId,
  };
  if (expected && typeof error === 'object' && error !== null) {
    for (const field of EXTENSION_FIELDS) {
      const value = (error as Record<string, unknown>)[field];
      if (value !== undefined) body[field] = value;
    }
  }
  if (code === 'validation_failed' && !Array.isArray(body.errors)) {
    // The contract gives every validation_failed its errors[]. Our own validation always names
    // the field; a 4xx from the framework that names none is about the request as a whole.
    body.errors = [{ field: 'request', message: 'is malformed' }];
  }
  const headers: Record<string, string> = {};
  const retryAfter = (error as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
  if (typeof retryAfter === 'number') headers['Retry-After'] = String(retryAfter);
  return { status: kind.status, headers, body };
}

/** A transient database failure that no code of ours has already turned into a problem. */
function transientDatabaseFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return !isProblemCode(code) && !(error instanceof HttpException) && isTransientDatabaseFailure(error);
}

/** Nest's own HTTP exceptions (unknown route, …) get our wording, not theirs. */
function detailOf(error: unknown, code: ProblemCode): string {
  if (error instanceof HttpException) {
    switch (code) {
      case 'not_found':
        return 'No such route or resource.';
      case 'payload_too_large':
        return 'The request body is larger than this API accepts.';
      case 'unsupported_media_type':
        return 'Send the body as UTF-8 encoded application/json.';
      case 'validation_failed':
        return 'The request is malformed.';
      default:
        break;
    }
  }
  return error instanceof Error ? error.message : PROBLEM_KINDS[code].title;
}
