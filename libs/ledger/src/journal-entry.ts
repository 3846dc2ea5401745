import type { AccountCode } from './accounts';

export interface JournalLine {
  account: AccountCode;
  debit: number;
  credit: number;
}

/** A balanced double-entry posting in one currency, tied to the document that caused it. */
export interface JournalEntryDraft {
  companyId: string;
  currency: string;
  sourceType: string;
  sourceId: string;
  memo: string;
  postedAt: Date;
  /**
   * The date of the document the entry records (YYYY-MM-DD): what reports by date select on.
   * Default: the UTC date of `postedAt`.
   */
  entryDate?: string;
  lines: JournalLine[];
}

export class UnbalancedEntryError extends Error {
  constructor(debits: number, credits: number) {
    super(`journal entry does not balance: debits ${debits}, credits ${credits}`);
  }
}

/**
 * Drops zero lines (a 0% VAT invoice has no VAT line) and checks the balance before the
 * database checks it again at commit.
 * @throws UnbalancedEntryError when debits differ from credits (a programming mistake)
 */
export function balancedLines(lines: readonly JournalLine[]): JournalLine[] {
  const kept = lines.filter((line) => line.debit !== 0 || line.credit !== 0);
  const debits = kept.reduce((sum, line) => sum + line.debit, 0);
  const credits = kept.reduce((sum, line) => sum + line.credit, 0);
  if (debits !== credits) throw new UnbalancedEntryError(debits, credits);
  return kept;
}
