/**
 * Cursor pagination (`?limit=&startingAfter=<id>`) as every list route does it: keyset order,
 * one extra row fetched to know whether more follow. One place for the rules:
 * - the cursor is looked up inside the same company (`company_id = $1`), so another company's
 *   id cannot position a page;
 * - an unknown cursor yields an empty page rather than restarting from the beginning;
 * - the order keys end in a unique column, so pages never repeat or skip rows.
 * Table, alias and key names are constants of the callers, never input.
 */

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * `(cursor absent OR row's keys > the cursor row's keys)`, with the cursor id in parameter
 * `$cursorParam` and the company id in `$1`.
 */
export function afterCursorSql(
  table: string,
  alias: string,
  orderKeys: readonly string[],
  cursorParam: number,
): string {
  const cursor = `$${cursorParam}`;
  const rowKeys = orderKeys.map((key) => `${alias}.${key}`).join(', ');
  const cursorKeys = orderKeys.map((key) => `cur.${key}`).join(', ');
  return `(${cursor}::uuid IS NULL OR (${rowKeys}) > (
            SELECT ${cursorKeys} FROM ${table} cur WHERE cur.company_id = $1 AND cur.id = ${cursor}))`;
}

export function orderBySql(alias: string, orderKeys: readonly string[]): string {
  return `ORDER BY ${orderKeys.map((key) => `${alias}.${key}`).join(', ')}`;
}

/** The page from rows fetched with `LIMIT limit + 1`. */
export function pageOf<Row, T>(rows: readonly Row[], limit: number, toItem: (row: Row) => T): Page<T> {
  return { data: rows.slice(0, limit).map(toItem), hasMore: rows.length > limit };
}
