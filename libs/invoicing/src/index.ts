export { InvoicingModule } from './invoicing.module';
export { IssueInvoiceHandler } from './issue-invoice/issue-invoice.handler';
export { IssueInvoiceDto, InvoiceLineDto, PartyDto, toIssueInvoiceCommand } from './issue-invoice/issue-invoice.dto';
export type { CompanyDefaults, IssueInvoiceCommand } from './issue-invoice/issue-invoice.dto';
export { InvoiceQueries } from './invoices/invoice-queries';
export { InvoiceView, InvoiceListView, InvoiceLineView, VatBreakdownView, PartyView } from './invoices/invoice.view';
export { DueDateBeforeIssueDateError, InvoiceNotFoundError, OrderAlreadyInvoicedError } from './invoicing.errors';
export { AmountOutOfRangeError, computeDocumentTotals } from './vat';
export { formatDocumentNumber } from './numbering/document-number';
