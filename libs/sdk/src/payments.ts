import type { ListPaymentsData, PaymentView } from './generated/types.gen.js';
import type { CreateResult } from './create-result.js';
import { parseRetryAfterMs } from './retry-policy.js';

/** A payment whose outcome is known: the provider charged (`succeeded`) or declined (`failed`). */
export type FinalPayment = PaymentView & { status: 'succeeded' | 'failed' };
/** A payment whose outcome is not known yet. */
export type ProcessingPayment = PaymentView & { status: 'processing' };

/** `201`: the outcome is known, stored under the key and replayed by every retry. */
export interface FinalPaymentResult extends CreateResult<FinalPayment> {
  final: true;
}

/**
 * `202`: the provider's outcome is not known yet (it timed out, failed, or its answer was lost).
 * Nothing is stored under the key: send the same body with the same `idempotencyKey` again (it
 * resumes this payment, never a second charge) or poll `GET location`.
 */
export interface ProcessingPaymentResult extends CreateResult<ProcessingPayment> {
  final: false;
  /** The answer's `Retry-After`, in milliseconds: when asking again may know more. */
  retryAfterMs: number | undefined;
  /** The answer's `Location`, e.g. `/v1/payments/9b2e…`. */
  location: string | undefined;
}

/** What `payments.create` returns: branch on `final` (or on `data.status`). */
export type PaymentResult = FinalPaymentResult | ProcessingPaymentResult;

/** The payments list's query: pagination plus its filters, typed from the OpenAPI document. */
export type PaymentListQuery = NonNullable<ListPaymentsData['query']>;

/** How `payments.createAndWait` and `payments.waitForFinal` wait for a processing payment. */
export interface PaymentWaitOptions {
  /** The deadline, from the call: afterwards `PaymentStillProcessingError` is thrown. Default 120000. */
  maxWaitMs?: number;
  /** The first pause before asking again (a longer `Retry-After` wins). Default 1000. */
  pollIntervalMs?: number;
  /** The pause doubles on each round up to this. Default 15000. */
  maxPollIntervalMs?: number;
}

/**
 * The payment is still `processing` at the wait's deadline: its outcome is unknown, which is not a
 * failure — the provider may yet charge it. Ask again later: `createAndWait` with the same
 * `idempotencyKey` and body, or `waitForFinal(payment.id)`.
 */
export class PaymentStillProcessingError extends Error {
  override readonly name = 'PaymentStillProcessingError';

  constructor(
    readonly payment: PaymentView,
    /** The key of the create calls (undefined for `waitForFinal`). */
    readonly idempotencyKey: string | undefined,
    /** HTTP attempts made while waiting, the first included. */
    readonly attempts: number,
  ) {
    super(
      `payment ${payment.id} (${payment.providerReference}) is still processing: its outcome is not known yet`,
    );
  }
}

/** A create's answer, typed by whether it is final. */
export function toPaymentResult(
  result: CreateResult<PaymentView>,
  headers: Headers,
  now: number,
): PaymentResult {
  if (result.data.status !== 'processing') {
    return { ...result, data: result.data as FinalPayment, final: true };
  }
  return {
    ...result,
    data: result.data as ProcessingPayment,
    final: false,
    retryAfterMs: parseRetryAfterMs(headers.get('retry-after'), now),
    location: headers.get('location') ?? undefined,
  };
}

/**
 * The pause before round `poll` (0-based) of a wait: the interval doubling up to its cap, with
 * jitter in [50 %, 100 %] so that many waiting clients spread out, and never below `Retry-After`.
 */
export function pollDelayMs(
  poll: number,
  retryAfterMs: number | undefined,
  options: PaymentWaitOptions | undefined,
  random: () => number,
): number {
  const base = options?.pollIntervalMs ?? 1_000;
  const cap = options?.maxPollIntervalMs ?? 15_000;
  const backoff = Math.min(cap, base * 2 ** Math.min(poll, 30));
  return Math.max(retryAfterMs ?? 0, Math.floor(backoff * (0.5 + random() / 2)));
}
