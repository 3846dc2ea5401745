/**
 * What a payment provider reports, in ledgerkey's terms (the sandbox answers exactly these; an
 * adapter for a real provider maps its objects to them). Amounts are integers in the currency's
 * minor unit, currencies ISO 4217 upper case, times ISO 8601 strings in UTC.
 */

export type ProviderChargeStatus = 'succeeded' | 'failed' | 'refunded';

/** What ledgerkey attaches to each charge; a provider stores and returns it. */
export interface ProviderChargeMetadata {
  companyId: string;
  paymentId: string;
  [key: string]: string;
}

export interface ProviderRefund {
  id: string;
  chargeId: string;
  amount: number;
  createdAt: string;
}

export interface ProviderCharge {
  /** The provider's id, e.g. `ch_…`. */
  id: string;
  /** The merchant's reference the charge was made with (ledgerkey: the payment's providerReference). */
  reference: string;
  amount: number;
  currency: string;
  /** `refunded` once refunds reach the amount; a partly refunded charge is still `succeeded`. */
  status: ProviderChargeStatus;
  /** Why a `failed` charge failed (`card_declined`, …); null otherwise. */
  failureCode: string | null;
  refundedAmount: number;
  refunds: ProviderRefund[];
  /**
   * String values; ledgerkey's charges carry `companyId` and `paymentId`. A charge made outside
   * ledgerkey may carry neither.
   */
  metadata: Record<string, string>;
  /** The payout that paid it out, once one did. */
  payoutId: string | null;
  createdAt: string;
}

export interface ProviderPayoutCharge {
  id: string;
  /** What the payout counted for the charge (its amount less refunds made before the payout). */
  amount: number;
}

export interface ProviderPayout {
  /** e.g. `po_…`: the settlement's `payoutId`. */
  id: string;
  companyId: string;
  currency: string;
  paidAt: string;
  /** What reached the bank: the charges' amounts less the fee. */
  amount: number;
  feeAmount: number;
  charges: ProviderPayoutCharge[];
}

export type ProviderChargeEventType = 'charge.succeeded' | 'charge.failed' | 'charge.refunded';
export type ProviderEventType = ProviderChargeEventType | 'payout.paid';

/**
 * A webhook event's body, exactly as the sandbox POSTs it (shared/api-v1.md, "Provider events"),
 * signed per Standard Webhooks with `webhook-id` = `id`. Delivered at least once, in any order.
 * `charge.refunded` comes once per refund and carries the charge after it (`refunds` lists each
 * refund with its id).
 */
export type ProviderEvent =
  | { id: string; type: ProviderChargeEventType; createdAt: string; data: ProviderCharge }
  | { id: string; type: 'payout.paid'; createdAt: string; data: ProviderPayout };
