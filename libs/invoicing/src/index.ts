export { InvoicingModule } from './invoicing.module';
export { IssueInvoiceHandler } from './issue-invoice/issue-invoice.handler';
export { IssueInvoiceDto } from './issue-invoice/issue-invoice.dto';
export { InvoiceQueries } from './invoices/invoice-queries';
export { InvoiceBalances } from './invoices/invoice-balances';
export type { PayableInvoice } from './invoices/invoice-balances';
export { InvoiceListView, InvoiceView } from './invoices/invoice.view';
export type { InvoiceListFilter } from './invoices/invoices.repository';
export {
  INVOICE_CREDIT_STATUSES,
  INVOICE_PAYMENT_STATUSES,
  invoiceStatusOf,
} from './invoices/invoice-status';
export type { InvoiceCreditStatus, InvoicePaymentStatus } from './invoices/invoice-status';
export { IssueCreditNoteHandler } from './issue-credit-note/issue-credit-note.handler';
export { IssueCreditNoteDto } from './issue-credit-note/issue-credit-note.dto';
export { CreditNoteQueries } from './credit-notes/credit-note-queries';
export { CreditNoteListView, CreditNoteView } from './credit-notes/credit-note.view';
export type { CreditNoteListFilter } from './credit-notes/credit-notes.repository';
export { RecordSettlementHandler } from './record-settlement/record-settlement.handler';
export { RecordSettlementDto } from './record-settlement/record-settlement.dto';
export { SettlementQueries } from './settlements/settlement-queries';
export { SettlementListView, SettlementView } from './settlements/settlement.view';
export type { SettlementListFilter } from './settlements/settlements.repository';
export {
  AllocationExceedsOutstandingError,
  CreditExceedsInvoiceError,
  CreditNoteEmptyError,
  CreditNoteNotFoundError,
  InvoiceNotFoundError,
  OrderAlreadyInvoicedError,
  PayoutAlreadySettledError,
  SettlementNotFoundError,
} from './invoicing.errors';
