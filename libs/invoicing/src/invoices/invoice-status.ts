/**
 * What an invoice's running totals mean, derived and never stored: one definition here, in
 * TypeScript for the views and in SQL for the list filters (a handler spec checks they agree).
 *
 * - `outstandingAmount` = gross − credited − paid: what the customer still owes. Negative when the
 *   invoice was paid and then credited: that much is due back to the customer (a refund).
 * - `paymentStatus`: `paid` when nothing is outstanding (outstanding ≤ 0: paid, credited, or both —
 *   a fully credited invoice is not owed, so it is never listed as `unpaid`); else `partially_paid` when
 *   some payment or settlement was applied; else `unpaid`.
 * - `creditStatus`: `none` with no credit note; `credited` when credit notes cover the whole gross
 *   total; else `partially_credited`.
 */

export const INVOICE_PAYMENT_STATUSES = ['unpaid', 'partially_paid', 'paid'] as const;
export type InvoicePaymentStatus = (typeof INVOICE_PAYMENT_STATUSES)[number];

export const INVOICE_CREDIT_STATUSES = ['none', 'partially_credited', 'credited'] as const;
export type InvoiceCreditStatus = (typeof INVOICE_CREDIT_STATUSES)[number];

export interface InvoiceTotals {
  grossTotal: number;
  creditedTotal: number;
  paidTotal: number;
}

export interface InvoiceStatus {
  outstandingAmount: number;
  paymentStatus: InvoicePaymentStatus;
  creditStatus: InvoiceCreditStatus;
}

export function invoiceStatusOf({ grossTotal, creditedTotal, paidTotal }: InvoiceTotals): InvoiceStatus {
  const outstandingAmount = grossTotal - creditedTotal - paidTotal;
  return {
    outstandingAmount,
    paymentStatus: outstandingAmount <= 0 ? 'paid' : paidTotal > 0 ? 'partially_paid' : 'unpaid',
    creditStatus:
      creditedTotal === 0 ? 'none' : creditedTotal >= grossTotal ? 'credited' : 'partially_credited',
  };
}

/** `invoiceStatusOf(...).paymentStatus` in SQL, over an invoices row aliased `alias`. */
export function paymentStatusSql(alias: string): string {
  return `CASE WHEN ${alias}.gross_total - ${alias}.credited_total - ${alias}.paid_total <= 0 THEN 'paid'
               WHEN ${alias}.paid_total > 0 THEN 'partially_paid'
               ELSE 'unpaid' END`;
}

/** `invoiceStatusOf(...).creditStatus` in SQL, over an invoices row aliased `alias`. */
export function creditStatusSql(alias: string): string {
  return `CASE WHEN ${alias}.credited_total = 0 THEN 'none'
               WHEN ${alias}.credited_total >= ${alias}.gross_total THEN 'credited'
               ELSE 'partially_credited' END`;
}
