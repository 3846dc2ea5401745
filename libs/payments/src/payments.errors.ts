/** Business outcomes of payments. Each has a stable `code`; none of them charged anything. */

/** The amount is above what the invoice still has outstanding (or nothing is outstanding). */
export class AmountExceedsOutstandingError extends Error {
  readonly code = 'amount_exceeds_outstanding';
  constructor(
    invoice: { id: string; number: string; grossTotal: number; creditedTotal: number; paidTotal: number },
    processingTotal: number,
    amount: number,
  ) {
    const outstanding = invoice.grossTotal - invoice.creditedTotal - invoice.paidTotal - processingTotal;
    super(
      `A payment of ${amount} exceeds what invoice ${invoice.number} (${invoice.id}) has outstanding: ` +
        `${Math.max(0, outstanding)} (gross ${invoice.grossTotal} − credited ${invoice.creditedTotal} − ` +
        `paid ${invoice.paidTotal} − payments still processing ${processingTotal}).`,
    );
  }
}

/** Credit notes cover the whole invoice: nobody owes anything on it. */
export class InvoiceFullyCreditedError extends Error {
  readonly code = 'invoice_fully_credited';
  constructor(invoice: { id: string; number: string }) {
    super(`Invoice ${invoice.number} (${invoice.id}) is fully credited: there is nothing to pay.`);
  }
}

/** The request named a currency other than the invoice's. */
export class PaymentCurrencyMismatchError extends Error {
  readonly code = 'currency_mismatch';
  constructor(invoice: { id: string; number: string; currency: string }, currency: string) {
    super(
      `Invoice ${invoice.number} (${invoice.id}) is in ${invoice.currency}; it cannot be paid in ${currency}.`,
    );
  }
}

export class PaymentNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(paymentId: string) {
    super(`No payment ${paymentId} exists.`);
  }
}

/**
 * No payment provider is configured in this process (PAYMENT_PROVIDER_URL unset outside `npm
 * start`): refused before anything is stored or charged.
 */
export class PaymentProviderNotConfiguredError extends Error {
  readonly code = 'payment_provider_unavailable';
  readonly retryAfterSeconds = 60;
  constructor() {
    super('No payment provider is configured for this server; nothing was charged.');
  }
}

export class ReconciliationRunNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(runId: string) {
    super(`No reconciliation run ${runId} exists.`);
  }
}
