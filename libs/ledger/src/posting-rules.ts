import { Account } from './accounts';
import type { JournalLine } from './journal-entry';

/** A sales invoice: debit receivables (gross); credit revenue (net) and VAT payable (VAT). */
export function salesInvoicePosting(totals: { netTotal: number; vatTotal: number; grossTotal: number }): JournalLine[] {
  return [
    { account: Account.AccountsReceivable, debit: totals.grossTotal, credit: 0 },
    { account: Account.Revenue, debit: 0, credit: totals.netTotal },
    { account: Account.VatPayable, debit: 0, credit: totals.vatTotal },
  ];
}
