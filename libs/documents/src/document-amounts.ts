import { computeDocumentTotals, type VatBreakdownRow } from '@ledgerkey/money';
import type { LineInput } from './document-line.dto';
import { type DocumentLine, type StoredLine, toLineViews } from './document-lines';

/**
 * What every priced document (sales invoice, credit note, purchase invoice) shows of its money,
 * in the order it shows it: numbered lines with their nets, the VAT breakdown per rate and the
 * three totals. Spread into a view, it keeps that member order.
 */
export interface DocumentAmounts {
  lines: DocumentLine[];
  vatBreakdown: VatBreakdownRow[];
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
}

/**
 * Prices the lines (EN 16931, see computeDocumentTotals) and numbers them from 1.
 * @throws AmountOutOfRangeError when a total would exceed the supported range
 */
export function priceLines(lines: readonly LineInput[]): DocumentAmounts {
  const totals = computeDocumentTotals(lines);
  return {
    lines: numberedLines(lines.map((line, index) => ({ ...line, netAmount: totals.lineNetAmounts[index] }))),
    vatBreakdown: totals.vatBreakdown,
    netTotal: totals.netTotal,
    vatTotal: totals.vatTotal,
    grossTotal: totals.grossTotal,
  };
}

/** Priced lines numbered from 1 in the order given, members in the order the API shows them. */
export function numberedLines(lines: ReadonlyArray<LineInput & { netAmount: number }>): DocumentLine[] {
  return lines.map((line, index) => ({
    position: index + 1,
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    vatRate: line.vatRate,
    netAmount: line.netAmount,
  }));
}

/** The parameters for the columns `vat_breakdown, net_total, vat_total, gross_total`, in that order. */
export function totalsParameters(amounts: DocumentAmounts): unknown[] {
  return [JSON.stringify(amounts.vatBreakdown), amounts.netTotal, amounts.vatTotal, amounts.grossTotal];
}

/** The amounts columns of a document row, as a `SELECT` with `linesAggregateSql` returns them. */
export interface StoredAmounts {
  lines: StoredLine[];
  vat_breakdown: VatBreakdownRow[];
  net_total: string;
  vat_total: string;
  gross_total: string;
}

/** A stored document's amounts as the API shows them (bigint text to numbers, canonical decimals). */
export function storedAmountsOf(row: StoredAmounts): DocumentAmounts {
  return {
    lines: toLineViews(row.lines),
    vatBreakdown: row.vat_breakdown.map((vat) => ({
      vatRate: vat.vatRate,
      netAmount: vat.netAmount,
      vatAmount: vat.vatAmount,
    })),
    netTotal: Number(row.net_total),
    vatTotal: Number(row.vat_total),
    grossTotal: Number(row.gross_total),
  };
}
