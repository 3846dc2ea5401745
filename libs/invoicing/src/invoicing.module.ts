import { Module } from '@nestjs/common';
import { DocumentsModule } from '@ledgerkey/documents';
import { CreditNoteQueries } from './credit-notes/credit-note-queries';
import { CreditNotesRepository } from './credit-notes/credit-notes.repository';
import { InvoiceBalances } from './invoices/invoice-balances';
import { InvoiceQueries } from './invoices/invoice-queries';
import { InvoicesRepository } from './invoices/invoices.repository';
import { IssueCreditNoteHandler } from './issue-credit-note/issue-credit-note.handler';
import { IssueInvoiceHandler } from './issue-invoice/issue-invoice.handler';
import { DocumentSequenceRepository } from './numbering/document-sequence.repository';
import { RecordSettlementHandler } from './record-settlement/record-settlement.handler';
import { SettlementQueries } from './settlements/settlement-queries';
import { SettlementsRepository } from './settlements/settlements.repository';

@Module({
  imports: [DocumentsModule],
  providers: [
    InvoicesRepository,
    InvoiceBalances,
    DocumentSequenceRepository,
    IssueInvoiceHandler,
    InvoiceQueries,
    CreditNotesRepository,
    IssueCreditNoteHandler,
    CreditNoteQueries,
    SettlementsRepository,
    RecordSettlementHandler,
    SettlementQueries,
  ],
  exports: [
    IssueInvoiceHandler,
    InvoiceQueries,
    InvoiceBalances,
    IssueCreditNoteHandler,
    CreditNoteQueries,
    RecordSettlementHandler,
    SettlementQueries,
  ],
})
export class InvoicingModule {}
