/** One reason a document cannot be written as Peppol BIS 3, named by the rule it would break. */
export interface EInvoiceProblem {
  /** The EN 16931 (`BR-…`) or Peppol (`PEPPOL-…`, national) rule id. */
  rule: string;
  message: string;
}

/**
 * The document cannot be written as a valid Peppol BIS Billing 3.0 document — the seller's
 * profile or the customer lacks what the rules require. Nothing is emitted instead of an
 * invalid document.
 */
export class EInvoiceNotRepresentableError extends Error {
  readonly code = 'einvoice_not_representable';

  constructor(readonly problems: readonly EInvoiceProblem[]) {
    super(problems.map((problem) => `${problem.rule}: ${problem.message}`).join('; '));
    this.name = 'EInvoiceNotRepresentableError';
  }
}
