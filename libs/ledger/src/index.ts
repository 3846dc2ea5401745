export { LedgerModule } from './ledger.module';
export { JournalRepository } from './journal.repository';
export {
  AggregateAmount,
  JournalEntryListView,
  JournalEntryView,
  JournalLineView,
  TrialBalanceRow,
  TrialBalanceTotalView,
  TrialBalanceView,
} from './ledger.view';
export { Account } from './accounts';
export type { AccountCode } from './accounts';
export type { JournalEntryDraft, JournalLine } from './journal-entry';
export {
  creditNotePosting,
  depreciationPosting,
  paymentPosting,
  providerPayoutPosting,
  purchaseInvoicePosting,
  refundPosting,
  salesInvoicePosting,
  settlementPosting,
} from './posting-rules';
