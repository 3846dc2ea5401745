/**
 * The kinds of document that take numbers. Each has its own gapless counters: numbering is
 * per (company, document type, series).
 */
export type DocumentType = 'invoice' | 'credit_note';

/**
 * The one series credit notes are numbered in, reserved for them: an invoice may not use it,
 * so a printed number never names an invoice and a credit note at once.
 */
export const CREDIT_NOTE_SERIES = 'CN';

/** `INV-000001`: series, a dash, the gapless sequence zero-padded to six digits. */
export function formatDocumentNumber(series: string, sequence: number): string {
  return `${series}-${String(sequence).padStart(6, '0')}`;
}
