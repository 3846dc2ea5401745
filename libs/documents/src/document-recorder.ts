import { Injectable } from '@nestjs/common';
import { DeferredWrites, Propagation, Transactional } from '@ledgerkey/database';
import { type JournalLine, JournalRepository } from '@ledgerkey/ledger';
import { type EventType, EventsRepository } from '@ledgerkey/outbox';

type CreatedObject<T> = T extends `${infer Object}.created` ? Object : never;

/** The `object` of a document that announces itself: `invoice` for the event `invoice.created`. */
export type DocumentObject = CreatedObject<EventType>;

/** What recording needs to know about a built document (its view, as create and GET answer it). */
export interface RecordedDocument {
  id: string;
  object: DocumentObject;
  currency: string;
  createdAt: string;
}

/** The document's journal entry, less what the document itself says (company, currency, source, time). */
export interface DocumentPosting {
  memo: string;
  lines: JournalLine[];
  /** The document's date (YYYY-MM-DD), e.g. an invoice's issue date; default: the UTC date of `createdAt`. */
  entryDate?: string;
}

/**
 * The last step every document use case shares (sales invoice, credit note, settlement,
 * purchase invoice): store the document, post its journal entry, announce it.
 */
@Injectable()
export class DocumentRecorder {
  constructor(
    private readonly journal: JournalRepository,
    private readonly events: EventsRepository,
    private readonly writes: DeferredWrites,
  ) {}

  /**
   * Records a built document in the caller's transaction, in this order: `insert` (the
   * document's own statements: its rows, and running totals it changes; it answers the document
   * as stored, e.g. with the seller snapshot its INSERT took), then its journal entry (source
   * type = `object`, posted at `createdAt`, dated `postingOf(document).entryDate`) and its `<object>.created`
   * event in one statement — or in the caller's batch (`DeferredWrites`).
   * Mandatory transaction: the document, its entry and its event commit together or not at all.
   * @returns the document, as the event carries it
   * @throws whatever `insert` throws (e.g. a business conflict it found); nothing is posted then
   */
  @Transactional(Propagation.Mandatory)
  async record<D extends RecordedDocument>(
    companyId: string,
    insert: () => Promise<D>,
    postingOf: (document: D) => DocumentPosting,
  ): Promise<D> {
    const document = await insert();
    const posting = postingOf(document);
    const entry = this.journal.posting({
      companyId,
      currency: document.currency,
      sourceType: document.object,
      sourceId: document.id,
      memo: posting.memo,
      postedAt: new Date(document.createdAt),
      entryDate: posting.entryDate,
      lines: posting.lines,
    });
    // Last, right before the caller's idempotency record and COMMIT: the append takes the
    // company's event position (its event_sequences row lock, held to COMMIT), and every other
    // document of the company waits on it, so it must be held only for the commit. Entry and
    // event go as one statement — with the caller's idempotency record when it batches its
    // writes (`DeferredWrites.withBatch`).
    const event = this.events.appending(companyId, `${document.object}.created`, document);
    await this.writes.write(...(entry ? [entry.write] : []), event.write);
    return document;
  }
}
