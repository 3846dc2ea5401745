/** Business outcomes of invoicing use cases. Each has a stable `code`. */

export class OrderAlreadyInvoicedError extends Error {
  readonly code = 'order_already_invoiced';
  constructor(
    readonly orderId: string,
    readonly existingInvoiceId: string,
  ) {
    super(`Order ${orderId} is already invoiced by invoice ${existingInvoiceId}.`);
  }
}

export class InvoiceNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(invoiceId: string) {
    super(`No invoice ${invoiceId} exists.`);
  }
}

export class CreditExceedsInvoiceError extends Error {
  readonly code = 'credit_exceeds_invoice';
}

export class CreditNoteEmptyError extends Error {
  readonly code = 'credit_note_empty';
  constructor() {
    super('A credit note must credit a positive amount.');
  }
}

export class CreditNoteNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(creditNoteId: string) {
    super(`No credit note ${creditNoteId} exists.`);
  }
}

export class PayoutAlreadySettledError extends Error {
  readonly code = 'payout_already_settled';
  constructor(
    readonly payoutId: string,
    readonly existingSettlementId: string,
  ) {
    super(`Payout ${payoutId} is already settled by settlement ${existingSettlementId}.`);
  }
}

/** An allocation the invoice cannot take: more than it still has outstanding, or another currency. */
export class AllocationExceedsOutstandingError extends Error {
  readonly code = 'allocation_exceeds_outstanding';
  private constructor(
    readonly invoiceId: string,
    message: string,
  ) {
    super(message);
  }

  /** `processing`: what the invoice's payments still processing hold back (they may yet succeed). */
  static aboveOutstanding(
    invoice: { id: string; number: string; grossTotal: number; creditedTotal: number; paidTotal: number },
    amount: number,
    processing = 0,
  ): AllocationExceedsOutstandingError {
    const outstanding = invoice.grossTotal - invoice.creditedTotal - invoice.paidTotal - processing;
    const held = processing > 0 ? ` − payments still processing ${processing}` : '';
    return new AllocationExceedsOutstandingError(
      invoice.id,
      `Allocation of ${amount} to invoice ${invoice.number} (${invoice.id}) exceeds its outstanding amount ` +
        `${outstanding} (gross ${invoice.grossTotal} − credited ${invoice.creditedTotal} − paid ${invoice.paidTotal}${held}).`,
    );
  }

  static currencyMismatch(
    invoice: { id: string; number: string; currency: string },
    currency: string,
  ): AllocationExceedsOutstandingError {
    return new AllocationExceedsOutstandingError(
      invoice.id,
      `Invoice ${invoice.number} (${invoice.id}) is in ${invoice.currency}; a ${currency} settlement cannot pay it.`,
    );
  }
}

export class SettlementNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(settlementId: string) {
    super(`No settlement ${settlementId} exists.`);
  }
}
