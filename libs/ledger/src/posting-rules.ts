import { Account } from './accounts';
import type { JournalLine } from './journal-entry';

interface DocumentTotals {
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
}

/** A sales invoice: debit receivables (gross); credit revenue (net) and VAT payable (VAT). */
export function salesInvoicePosting(totals: DocumentTotals): JournalLine[] {
  return [
    { account: Account.AccountsReceivable, debit: totals.grossTotal, credit: 0 },
    { account: Account.Revenue, debit: 0, credit: totals.netTotal },
    { account: Account.VatPayable, debit: 0, credit: totals.vatTotal },
  ];
}

/** A credit note reverses a sales invoice: debit revenue and VAT payable; credit receivables. */
export function creditNotePosting(totals: DocumentTotals): JournalLine[] {
  return [
    { account: Account.Revenue, debit: totals.netTotal, credit: 0 },
    { account: Account.VatPayable, debit: totals.vatTotal, credit: 0 },
    { account: Account.AccountsReceivable, debit: 0, credit: totals.grossTotal },
  ];
}

/**
 * A provider payout settling invoices: debit bank (what arrived: allocated − fee) and payment
 * fees (what the provider kept); credit receivables (everything the customers paid).
 */
export function settlementPosting(settlement: { allocatedTotal: number; feeAmount: number }): JournalLine[] {
  return [
    { account: Account.Bank, debit: settlement.allocatedTotal - settlement.feeAmount, credit: 0 },
    { account: Account.PaymentFees, debit: settlement.feeAmount, credit: 0 },
    { account: Account.AccountsReceivable, debit: 0, credit: settlement.allocatedTotal },
  ];
}

/** A supplier's invoice: debit expense (net) and VAT receivable (VAT); credit payables (gross). */
export function purchaseInvoicePosting(totals: DocumentTotals): JournalLine[] {
  return [
    { account: Account.Expense, debit: totals.netTotal, credit: 0 },
    { account: Account.VatReceivable, debit: totals.vatTotal, credit: 0 },
    { account: Account.AccountsPayable, debit: 0, credit: totals.grossTotal },
  ];
}

/** A month's depreciation of a fixed asset: debit depreciation expense, credit accumulated depreciation. */
export function depreciationPosting(charge: { amount: number }): JournalLine[] {
  return [
    { account: Account.DepreciationExpense, debit: charge.amount, credit: 0 },
    { account: Account.AccumulatedDepreciation, debit: 0, credit: charge.amount },
  ];
}

/**
 * A customer's payment collected by the payment provider: debit provider clearing (the provider
 * holds the money until its payout), credit receivables.
 */
export function paymentPosting(payment: { amount: number }): JournalLine[] {
  return [
    { account: Account.ProviderClearing, debit: payment.amount, credit: 0 },
    { account: Account.AccountsReceivable, debit: 0, credit: payment.amount },
  ];
}

/**
 * A refund of a payment the provider collected (the reverse of `paymentPosting`): debit
 * receivables (the customer no longer paid that much), credit provider clearing (the provider
 * paid it back out of what it holds for us).
 */
export function refundPosting(refund: { amount: number }): JournalLine[] {
  return [
    { account: Account.AccountsReceivable, debit: refund.amount, credit: 0 },
    { account: Account.ProviderClearing, debit: 0, credit: refund.amount },
  ];
}

/**
 * A provider payout of payments it collected (imported from its `payout.paid`): debit bank (what
 * arrived: total − fee) and payment fees; credit provider clearing (the payments' posting already
 * credited receivables).
 */
export function providerPayoutPosting(settlement: {
  allocatedTotal: number;
  feeAmount: number;
}): JournalLine[] {
  return [
    { account: Account.Bank, debit: settlement.allocatedTotal - settlement.feeAmount, credit: 0 },
    { account: Account.PaymentFees, debit: settlement.feeAmount, credit: 0 },
    { account: Account.ProviderClearing, debit: 0, credit: settlement.allocatedTotal },
  ];
}
