/**
 * The date each kind of document counts on in reports (its VAT point): an invoice's and a
 * purchase invoice's issue date; a credit note's issue date, which is the UTC date of its
 * creation (credit notes are dated when issued). The journal entry of each document carries the
 * same date (`journal_entries.entry_date`), so a report and the ledger select the same documents.
 */
export const DocumentDate = {
  invoice: 'i.issue_date',
  purchaseInvoice: 'p.issue_date',
  creditNote: `(c.created_at AT TIME ZONE 'UTC')::date`,
} as const;

/**
 * A credit note's date within [$from, $to], written as a range over `created_at` so the
 * (company_id, created_at) index serves it.
 */
export function creditNoteDateBetween(from: string, to: string): string {
  return `c.created_at >= (${from}::date)::timestamp AT TIME ZONE 'UTC'
          AND c.created_at < (${to}::date + 1)::timestamp AT TIME ZONE 'UTC'`;
}
