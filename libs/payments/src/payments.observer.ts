/** A call to the payment provider, as the metrics name it. */
export type ProviderCall = 'create_charge' | 'find_charge';

/**
 * How a provider call ended: a charge's outcome (`succeeded`, `failed`, `rejected`, or the reason
 * it is unknown: `timeout`, `no_answer`, `server_error`, …) or a lookup's (`found`, `not_found`,
 * `ambiguous`, `unavailable`, `refused`).
 */
export type ProviderCallOutcome = string;

/** How one recovery attempt of a payment ended. */
export const PAYMENT_RECOVERY_RESULTS = ['succeeded', 'failed', 'pending', 'skipped', 'error'] as const;
export type PaymentRecoveryResult = (typeof PAYMENT_RECOVERY_RESULTS)[number];

/** How a provider event delivery (or a parked event's retry) ended, as the metrics count it. */
export const PROVIDER_EVENT_RESULTS = ['applied', 'duplicate', 'parked', 'ignored', 'rejected'] as const;
export type ProviderEventMetricResult = (typeof PROVIDER_EVENT_RESULTS)[number];

/** Injection token of the application's `PaymentsObserver`. */
export const PAYMENTS_OBSERVER = Symbol('PAYMENTS_OBSERVER');

/** The payments lib's port for metrics, so the lib needs no metrics library. Cheap, never throws. */
export interface PaymentsObserver {
  providerCall(call: ProviderCall, outcome: ProviderCallOutcome, seconds: number): void;
  recovery(result: PaymentRecoveryResult): void;
  /** A provider event delivery or a parked event's retry ended. */
  providerEvent(result: ProviderEventMetricResult): void;
}

export const NO_OP_PAYMENTS_OBSERVER: PaymentsObserver = {
  providerCall: () => undefined,
  recovery: () => undefined,
  providerEvent: () => undefined,
};
