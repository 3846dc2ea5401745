import { Module } from '@nestjs/common';
import { LedgerModule } from '@ledgerkey/ledger';
import { InvoiceQueries } from './invoices/invoice-queries';
import { InvoicesRepository } from './invoices/invoices.repository';
import { IssueInvoiceHandler } from './issue-invoice/issue-invoice.handler';
import { DocumentSequenceRepository } from './numbering/document-sequence.repository';

@Module({
  imports: [LedgerModule],
  providers: [InvoicesRepository, DocumentSequenceRepository, IssueInvoiceHandler, InvoiceQueries],
  exports: [IssueInvoiceHandler, InvoiceQueries, InvoicesRepository, DocumentSequenceRepository],
})
export class InvoicingModule {}
