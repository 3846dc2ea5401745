import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { CreditNoteNotFoundError } from '../invoicing.errors';
import type { CreditNoteListView, CreditNoteView } from './credit-note.view';
import { type CreditNoteListFilter, CreditNotesRepository } from './credit-notes.repository';

/** Read side of credit notes, always within one company. */
@Injectable()
export class CreditNoteQueries {
  constructor(private readonly creditNotes: CreditNotesRepository) {}

  /** @throws CreditNoteNotFoundError when the id is unknown in this company */
  async get(companyId: string, creditNoteId: string): Promise<CreditNoteView> {
    const note = await this.creditNotes.findById(companyId, creditNoteId);
    if (!note) throw new CreditNoteNotFoundError(creditNoteId);
    return note;
  }

  async list(
    companyId: string,
    page: PageRequest,
    filter?: CreditNoteListFilter,
  ): Promise<CreditNoteListView> {
    return { object: 'list', ...(await this.creditNotes.list(companyId, page, filter)) };
  }
}
