import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { DocumentRecorder, withMembersAfter } from '@ledgerkey/documents';
import { creditNotePosting } from '@ledgerkey/ledger';
import type { CreditNoteView } from '../credit-notes/credit-note.view';
import { CreditNotesRepository } from '../credit-notes/credit-notes.repository';
import { InvoiceNotFoundError } from '../invoicing.errors';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { CREDIT_NOTE_SERIES, formatDocumentNumber } from '../numbering/document-number';
import { DocumentSequenceRepository } from '../numbering/document-sequence.repository';
import { computeCredit } from './credit-limits';
import type { IssueCreditNoteDto } from './issue-credit-note.dto';

@Injectable()
export class IssueCreditNoteHandler {
  constructor(
    private readonly invoices: InvoicesRepository,
    private readonly creditNotes: CreditNotesRepository,
    private readonly sequences: DocumentSequenceRepository,
    private readonly recorder: DocumentRecorder,
  ) {}

  /**
   * Issues a credit note against an invoice of the company: own gapless series CN, the
   * reversing journal entry, and the invoice's `creditedTotal`, in one transaction.
   * @throws InvoiceNotFoundError when the invoice is not the company's
   * @throws CreditExceedsInvoiceError / CreditNoteEmptyError (see computeCredit)
   */
  @Transactional()
  async execute(companyId: string, dto: IssueCreditNoteDto, now = new Date()): Promise<CreditNoteView> {
    // The invoice row lock serializes credit notes (and settlements) of one invoice: two
    // concurrent partial credits cannot both pass the limit check below.
    const [invoice] = await this.invoices.lockForUpdate(companyId, [dto.invoiceId]);
    if (!invoice) throw new InvoiceNotFoundError(dto.invoiceId);
    const credited = await this.creditNotes.creditedByRate(companyId, invoice.id);
    const credit = computeCredit(invoice, credited, dto.lines ?? null);

    const sequence = await this.sequences.next(companyId, 'credit_note', CREDIT_NOTE_SERIES);
    const draft: Omit<CreditNoteView, 'seller'> = {
      id: randomUUID(),
      object: 'credit_note',
      number: formatDocumentNumber(CREDIT_NOTE_SERIES, sequence),
      series: CREDIT_NOTE_SERIES,
      sequence,
      invoiceId: invoice.id,
      invoiceNumber: invoice.number,
      reason: dto.reason,
      memo: dto.memo ?? null,
      currency: invoice.currency,
      ...credit,
      metadata: metadataOf(dto.metadata),
      createdAt: now.toISOString(),
    };
    const insert = async (): Promise<CreditNoteView> => {
      // The seller as the profile stands now (not as the invoice shows it): the note keeps it for ever.
      const seller = await this.creditNotes.insert(companyId, draft);
      // Under the invoice's row lock taken above.
      await this.invoices.addToRunningTotals(companyId, invoice.id, { credited: draft.grossTotal });
      return withMembersAfter(draft, { seller }, { seller: 'currency' });
    };
    return this.recorder.record(companyId, insert, () => ({
      memo: `Credit note ${draft.number} for invoice ${invoice.number}`,
      lines: creditNotePosting(draft),
    }));
  }
}
