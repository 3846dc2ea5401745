/**
 * The sandbox's objects as its API answers them (docs/provider-sandbox.md). Amounts are integers in
 * the currency's minor unit; times are ISO 8601 strings in UTC with milliseconds.
 */

export const MAGIC_PAYMENT_METHODS = [
  'pm_card_visa',
  'pm_card_declined',
  'pm_card_timeout',
  'pm_card_error',
  'pm_card_lost_response',
] as const;
export type PaymentMethod = (typeof MAGIC_PAYMENT_METHODS)[number];

export type ChargeStatus = 'succeeded' | 'failed' | 'refunded';

export interface Refund {
  id: string;
  chargeId: string;
  amount: number;
  createdAt: string;
}

export interface Charge {
  id: string;
  /** The merchant's stable reference (ledgerkey: the payment's providerReference). Not unique here. */
  reference: string;
  amount: number;
  currency: string;
  paymentMethod: PaymentMethod;
  /** `refunded` once refunds reach the amount; a partly refunded charge stays `succeeded`. */
  status: ChargeStatus;
  failureCode: string | null;
  refundedAmount: number;
  refunds: Refund[];
  /** String values; ledgerkey sends `companyId` and `paymentId`. Payouts group by `companyId`. */
  metadata: Record<string, string>;
  /** The payout that paid this charge out, once one did. */
  payoutId: string | null;
  createdAt: string;
}

export interface PayoutCharge {
  id: string;
  /** What the payout counted for the charge: its amount less what was refunded before the payout. */
  amount: number;
}

export interface Payout {
  id: string;
  companyId: string;
  currency: string;
  paidAt: string;
  /** The sum of the charges' amounts less the fee: what reached the bank. */
  amount: number;
  feeAmount: number;
  charges: PayoutCharge[];
}

export type EventType = 'charge.succeeded' | 'charge.failed' | 'charge.refunded' | 'payout.paid';

/** A webhook event, exactly the body that is POSTed (and signed). */
export type SandboxEvent =
  | { id: string; type: Exclude<EventType, 'payout.paid'>; createdAt: string; data: Charge }
  | { id: string; type: 'payout.paid'; createdAt: string; data: Payout };
