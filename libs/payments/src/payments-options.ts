import type { PaymentsConfig } from './payments-config';
import type { PaymentsObserver } from './payments.observer';

export const PAYMENTS_OPTIONS = Symbol('PAYMENTS_OPTIONS');

/** The payment provider of this process (a `PaymentProvider`), or null when none is configured. */
export const PAYMENT_PROVIDER = Symbol('PAYMENT_PROVIDER');

export interface PaymentsOptions {
  config: PaymentsConfig;
  /** Provider calls and recoveries, for metrics. Default: observes nothing. */
  observer?: PaymentsObserver;
}
