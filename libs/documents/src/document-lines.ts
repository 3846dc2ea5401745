import { canonicalNumeric } from '@ledgerkey/money';

/**
 * Lines of a priced document (invoice, credit note, purchase invoice) as stored and as the API
 * shows them. Every line table has the same columns; these helpers keep reading and writing
 * them in one place. Table and column names are constants of the callers, never input.
 */

export interface DocumentLine {
  position: number;
  description: string;
  quantity: string;
  unitPrice: number;
  vatRate: string;
  netAmount: number;
}

/** A line as `linesAggregateSql` returns it (numbers as text, so bigint and numeric stay exact). */
export interface StoredLine {
  position: number;
  description: string;
  quantity: string;
  unit_price: string;
  vat_rate: string;
  net_amount: string;
}

/**
 * A select-list item `… AS lines`: the document's lines as a JSON array in position order. By
 * (company, document): the line table's primary key starts with company_id.
 */
export function linesAggregateSql(lineTable: string, documentColumn: string, documentAlias: string): string {
  return `(SELECT json_agg(json_build_object(
                   'position', l.position, 'description', l.description,
                   'quantity', l.quantity::text, 'unit_price', l.unit_price::text,
                   'vat_rate', l.vat_rate::text, 'net_amount', l.net_amount::text)
                 ORDER BY l.position)
            FROM ${lineTable} l
           WHERE l.company_id = ${documentAlias}.company_id AND l.${documentColumn} = ${documentAlias}.id) AS lines`;
}

/** Stored lines as the API speaks them: canonical decimals ("2", not "2.0000"), numbers. */
export function toLineViews(lines: readonly StoredLine[]): DocumentLine[] {
  return lines.map((line) => ({
    position: line.position,
    description: line.description,
    quantity: canonicalNumeric(line.quantity),
    unitPrice: Number(line.unit_price),
    vatRate: canonicalNumeric(line.vat_rate),
    netAmount: Number(line.net_amount),
  }));
}

/**
 * An `INSERT … SELECT` of a document's lines from six array parameters, from `$first` on (see
 * `lineParameters`), all lines in one statement. The rows hang off `documentCte`, the CTE whose
 * `INSERT … RETURNING id` wrote the document: no lines without their document, and none when
 * that insert inserted nothing. The company id is `$2`.
 */
export function insertLinesSql(
  lineTable: string,
  documentColumn: string,
  documentCte: string,
  first: number,
): string {
  const p = (offset: number) => `$${first + offset}`;
  return `INSERT INTO ${lineTable} (${documentColumn}, company_id, position, description, quantity,
                                    unit_price, vat_rate, net_amount)
       SELECT ${documentCte}.id, $2, l.position, l.description, l.quantity, l.unit_price, l.vat_rate,
              l.net_amount
         FROM ${documentCte},
              unnest(${p(0)}::int[], ${p(1)}::text[], ${p(2)}::numeric[], ${p(3)}::bigint[], ${p(4)}::numeric[],
                     ${p(5)}::bigint[]) AS l(position, description, quantity, unit_price, vat_rate, net_amount)`;
}

/** The six array parameters `insertLinesSql` expects, in its order. */
export function lineParameters(lines: readonly DocumentLine[]): unknown[] {
  return [
    lines.map((line) => line.position),
    lines.map((line) => line.description),
    lines.map((line) => line.quantity),
    lines.map((line) => line.unitPrice),
    lines.map((line) => line.vatRate),
    lines.map((line) => line.netAmount),
  ];
}
