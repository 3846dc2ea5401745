import type { UnknownOutcomeReason } from './payment-provider';

/** A read got no usable answer (see `UnknownOutcomeReason`): retry later; conclude nothing. */
export class PaymentProviderUnavailableError extends Error {
  readonly code = 'payment_provider_unavailable';
  constructor(
    readonly reason: UnknownOutcomeReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`The payment provider gave no usable answer (${reason}): ${detail}`, options);
  }
}

/** The provider refused a read as such (a 4xx): the same request will be refused again. */
export class PaymentProviderRequestError extends Error {
  readonly code = 'payment_provider_request_rejected';
  constructor(
    readonly status: number,
    readonly providerCode: string,
    message: string,
  ) {
    super(`The payment provider refused the request (${status} ${providerCode}): ${message}`);
  }
}

/**
 * Several charges carry one reference: someone charged outside ledgerkey with it, or a bug sent
 * it under two idempotency keys. Which one is the payment's is for a person to decide.
 */
export class PaymentProviderAmbiguousReferenceError extends Error {
  readonly code = 'payment_provider_reference_ambiguous';
  constructor(
    readonly reference: string,
    readonly chargeIds: string[],
  ) {
    super(`The payment provider holds several charges with reference ${reference}: ${chargeIds.join(', ')}`);
  }
}
