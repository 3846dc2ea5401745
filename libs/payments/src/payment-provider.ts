import type {
  ProviderCharge,
  ProviderChargeMetadata,
  ProviderPayout,
  ProviderRefund,
} from './provider-objects';

/** A charge to make. */
export interface ChargeRequest {
  /** Our stable reference of the logical payment (the payment's providerReference). */
  reference: string;
  amount: number;
  currency: string;
  /** The customer's payment method at the provider (the sandbox: `pm_card_visa`, …). */
  paymentMethod: string;
  metadata: ProviderChargeMetadata;
}

/** A call that changes something at the provider. */
export interface ProviderCallOptions {
  /**
   * The provider's own idempotency key: the same key with the same request is one charge (or
   * refund) however often it is sent. ledgerkey passes the providerReference (refunds: a key of
   * their own), unchanged on every retry and after every crash.
   */
  idempotencyKey: string;
  /** No complete answer within this → outcome `unknown` (`timeout`). */
  timeoutMs: number;
}

/** A read. */
export interface ProviderReadOptions {
  /** Default: the adapter's own (the sandbox adapter: 10 s). */
  timeoutMs?: number;
}

/**
 * Why the outcome is unknown. In every case the provider may or may not have done it: the caller
 * must find out (look the charge up by reference, or retry with the same idempotency key) and
 * never guess.
 * - `timeout`: no complete answer within `timeoutMs`.
 * - `no_answer`: the connection failed or closed without a complete answer (refused, reset, lost).
 * - `server_error`: a 5xx.
 * - `in_progress`: another request with the same key is being executed (409); retry later.
 * - `not_authorized`: the provider refused our credentials (401/403): a configuration problem.
 * - `rate_limited`: 429.
 * - `unreadable_answer`: a 2xx whose body is not the expected object.
 */
export type UnknownOutcomeReason =
  | 'timeout'
  | 'no_answer'
  | 'server_error'
  | 'in_progress'
  | 'not_authorized'
  | 'rate_limited'
  | 'unreadable_answer';

/** The outcome is not known: nothing may be concluded, in particular not that nothing was charged. */
export interface UnknownOutcome {
  kind: 'unknown';
  reason: UnknownOutcomeReason;
  /** For logs: what happened, e.g. `answered 503` or the network error. */
  detail: string;
}

/**
 * The provider refused the request as such (a 4xx other than 401/403/409-in-progress/429): this
 * request made no charge or refund, and the same request will be refused again. `code` is the
 * provider's (e.g. `payment_method_unknown`, `idempotency_key_reused`, `refund_exceeds_charge`).
 */
export interface RejectedOutcome {
  kind: 'rejected';
  status: number;
  code: string;
  message: string;
}

/**
 * The result of `createCharge`. `succeeded` and `failed` are final: the provider made the charge
 * and said how it went (a decline is `failed` with a `failureCode`, not an error).
 */
export type ChargeOutcome =
  | { kind: 'succeeded'; charge: ProviderCharge }
  | { kind: 'failed'; charge: ProviderCharge; failureCode: string }
  | RejectedOutcome
  | UnknownOutcome;

export interface RefundRequest {
  chargeId: string;
  /** Default: what is left of the charge. */
  amount?: number;
}

/** The result of `refundCharge`; `refunded` is final. */
export type RefundOutcome =
  { kind: 'refunded'; refund: ProviderRefund; charge: ProviderCharge } | RejectedOutcome | UnknownOutcome;

/** Objects created from `createdFrom` (inclusive) to `createdTo` (exclusive); payouts by `paidAt`. */
export interface ProviderListRange {
  createdFrom: Date;
  createdTo: Date;
  /** Only this company's (charges: `metadata.companyId`). */
  companyId?: string;
}

/**
 * The payment provider port: what ledgerkey needs from a payment service provider. Adapters: the
 * provider sandbox (`SandboxPaymentProvider`); docs/provider-sandbox.md says how to write one for
 * a real provider.
 *
 * Writes (`createCharge`, `refundCharge`) never throw for what the provider or the network did:
 * they answer an outcome, `unknown` whenever the answer is not certain. Reads throw
 * `PaymentProviderUnavailableError` when they get no usable answer and
 * `PaymentProviderRequestError` when the provider refuses the request.
 */
export interface PaymentProvider {
  /** The provider's name: `provider` of a payment, `{provider}` in `/v1/providers/{provider}/events`. */
  readonly name: string;

  /** Makes a charge, or (same idempotency key, same request) answers the one made before. */
  createCharge(request: ChargeRequest, options: ProviderCallOptions): Promise<ChargeOutcome>;

  /**
   * The charge made with `reference`, or null when the provider holds none (then, and only then,
   * it is safe to send the charge again with the same key).
   * @throws PaymentProviderUnavailableError no usable answer: nothing may be concluded
   * @throws PaymentProviderAmbiguousReferenceError the provider holds several charges with it
   */
  findChargeByReference(reference: string, options?: ProviderReadOptions): Promise<ProviderCharge | null>;

  /**
   * Every charge in the range, oldest first, page by page.
   * @throws PaymentProviderUnavailableError, PaymentProviderRequestError while iterating
   */
  listCharges(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderCharge>;

  /**
   * Every payout paid in the range, oldest first.
   * @throws PaymentProviderUnavailableError, PaymentProviderRequestError while iterating
   */
  listPayouts(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderPayout>;

  /** Refunds (part of) a succeeded charge, or (same key, same request) answers the refund made before. */
  refundCharge(request: RefundRequest, options: ProviderCallOptions): Promise<RefundOutcome>;
}
