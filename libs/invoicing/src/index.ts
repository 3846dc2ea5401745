export { InvoicingModule } from './invoicing.module';
export { IssueInvoiceHandler } from './issue-invoice/issue-invoice.handler';
export { IssueInvoiceDto, toIssueInvoiceCommand } from './issue-invoice/issue-invoice.dto';
export type { CompanyDefaults, IssueInvoiceCommand } from './issue-invoice/issue-invoice.dto';
export { InvoiceQueries } from './invoices/invoice-queries';
export { InvoiceView, InvoiceListView } from './invoices/invoice.view';
export { InvoiceNotFoundError, OrderAlreadyInvoicedError } from './invoicing.errors';
export { CREDIT_NOTE_SERIES, formatDocumentNumber } from './numbering/document-number';
export type { DocumentType } from './numbering/document-number';
export { InvoicesRepository } from './invoices/invoices.repository';
export type { LockedInvoice } from './invoices/invoices.repository';
export { DocumentSequenceRepository } from './numbering/document-sequence.repository';
export { IssueCreditNoteHandler } from './issue-credit-note/issue-credit-note.handler';
export { IssueCreditNoteDto, CREDIT_NOTE_REASONS } from './issue-credit-note/issue-credit-note.dto';
export { computeCredit } from './issue-credit-note/credit-limits';
export { CreditNoteQueries } from './credit-notes/credit-note-queries';
export { CreditNoteView, CreditNoteListView } from './credit-notes/credit-note.view';
export { CreditExceedsInvoiceError, CreditNoteEmptyError, CreditNoteNotFoundError } from './invoicing.errors';
export { RecordSettlementHandler } from './record-settlement/record-settlement.handler';
export {
  MAX_ALLOCATION_AMOUNT,
  MAX_SETTLEMENT_ALLOCATIONS,
  MAX_SETTLEMENT_FEE,
  RecordSettlementDto,
  SettlementAllocationDto,
  toRecordSettlementCommand,
} from './record-settlement/record-settlement.dto';
export type { RecordSettlementCommand, SettlingCompany } from './record-settlement/record-settlement.dto';
export { SettlementQueries } from './settlements/settlement-queries';
export { SettlementAllocationView, SettlementListView, SettlementView } from './settlements/settlement.view';
export { SettlementsRepository } from './settlements/settlements.repository';
export {
  AllocationExceedsOutstandingError,
  PayoutAlreadySettledError,
  SettlementNotFoundError,
} from './invoicing.errors';
