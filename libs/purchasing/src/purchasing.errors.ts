/** Business outcomes of purchasing use cases. Each has a stable `code`. */

export class PurchaseInvoiceDuplicateError extends Error {
  readonly code = 'purchase_invoice_duplicate';
  constructor(
    readonly documentNumber: string,
    readonly existingPurchaseInvoiceId: string,
  ) {
    super(
      `Supplier document ${documentNumber} is already recorded as purchase invoice ${existingPurchaseInvoiceId}.`,
    );
  }
}

export class PurchaseInvoiceNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(purchaseInvoiceId: string) {
    super(`No purchase invoice ${purchaseInvoiceId} exists.`);
  }
}
