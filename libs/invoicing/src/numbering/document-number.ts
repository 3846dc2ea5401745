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

/**
 * `formatDocumentNumber` in SQL, for a statement that takes the number and stores the document
 * at once: at least six digits, more once the sequence needs them (lpad alone would cut them).
 */
export function documentNumberSql(series: string, sequence: string): string {
  return `${series} || '-' || lpad(${sequence}::text, greatest(6, length(${sequence}::text)), '0')`;
}
