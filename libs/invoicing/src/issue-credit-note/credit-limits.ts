import { type DocumentAmounts, type LineInput, numberedLines, priceLines } from '@ledgerkey/documents';
import type { VatBreakdownRow } from '@ledgerkey/money';
import { CreditExceedsInvoiceError, CreditNoteEmptyError } from '../invoicing.errors';

export interface CreditedAtRate {
  net: number;
  vat: number;
}

/**
 * What a credit note credits, within what the invoice still has uncredited per VAT rate.
 *
 * - No lines: exactly the remaining net and VAT of every rate, so the invoice and all its
 *   credit notes net to zero.
 * - Lines: VAT per rate on the credited nets (EN 16931), except that crediting the whole
 *   remaining net of a rate takes the whole remaining VAT, and VAT never exceeds what remains
 *   (rounding on partial credits cannot over-credit VAT).
 * @throws CreditExceedsInvoiceError for a rate the invoice lacks, a net above what remains at
 *   that rate, or a full credit of an invoice already fully credited
 * @throws CreditNoteEmptyError when the lines credit nothing
 * @throws AmountOutOfRangeError when the lines' amounts exceed the supported range
 */
export function computeCredit(
  invoice: { number: string; vatBreakdown: readonly VatBreakdownRow[] },
  credited: ReadonlyMap<string, CreditedAtRate>,
  requestedLines: readonly LineInput[] | null,
): DocumentAmounts {
  const remaining = new Map(
    invoice.vatBreakdown.map((row) => {
      const done = credited.get(row.vatRate) ?? { net: 0, vat: 0 };
      return [row.vatRate, { net: row.netAmount - done.net, vat: row.vatAmount - done.vat }];
    }),
  );

  if (requestedLines === null) {
    const open = [...remaining.entries()].filter(([, left]) => left.net > 0 || left.vat > 0);
    if (open.length === 0) {
      throw new CreditExceedsInvoiceError(`Invoice ${invoice.number} is already fully credited.`);
    }
    return summarize(
      open.map(([vatRate, left]) => ({
        description: `Credit of ${invoice.number}: remaining amount at ${vatRate}% VAT`,
        quantity: '1',
        unitPrice: left.net,
        vatRate,
        netAmount: left.net,
      })),
      open.map(([vatRate, left]) => ({ vatRate, netAmount: left.net, vatAmount: left.vat })),
    );
  }

  const priced = priceLines(requestedLines);
  const vatBreakdown = priced.vatBreakdown.map((row): VatBreakdownRow => {
    const left = remaining.get(row.vatRate);
    if (left === undefined) {
      throw new CreditExceedsInvoiceError(`Invoice ${invoice.number} has no lines at ${row.vatRate}% VAT.`);
    }
    if (row.netAmount > left.net) {
      throw new CreditExceedsInvoiceError(
        `Crediting ${row.netAmount} net at ${row.vatRate}% VAT exceeds the ${left.net} not yet credited ` +
          `on invoice ${invoice.number}.`,
      );
    }
    const vatAmount = row.netAmount === left.net ? left.vat : Math.min(row.vatAmount, left.vat);
    return { vatRate: row.vatRate, netAmount: row.netAmount, vatAmount };
  });
  return summarize(priced.lines, vatBreakdown);
}

function summarize(
  lines: ReadonlyArray<LineInput & { netAmount: number }>,
  vatBreakdown: VatBreakdownRow[],
): DocumentAmounts {
  const netTotal = vatBreakdown.reduce((sum, row) => sum + row.netAmount, 0);
  const vatTotal = vatBreakdown.reduce((sum, row) => sum + row.vatAmount, 0);
  if (netTotal + vatTotal === 0) throw new CreditNoteEmptyError();
  return { lines: numberedLines(lines), vatBreakdown, netTotal, vatTotal, grossTotal: netTotal + vatTotal };
}
