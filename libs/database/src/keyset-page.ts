/**
 * Cursor pagination as every list route does it (`?limit=&startingAfter=|endingBefore=&order=`
 * plus filters): keyset order, one extra row fetched to know whether more follow. One place for
 * the rules:
 * - the cursor is looked up inside the same company (`company_id = $1`), so another company's
 *   id cannot position a page;
 * - an unknown cursor yields an empty page rather than restarting from the beginning;
 * - the order keys end in a unique column, so pages never repeat or skip rows;
 * - `startingAfter` pages forwards in the list's order, `endingBefore` backwards (the page just
 *   before the cursor, still in the list's order; `hasMore` then says whether more precede it);
 * - filters are SQL conditions over the listed alias whose values are bound as parameters.
 * Table, alias and key names are constants of the callers, never input.
 */

import type { Sql } from './sql';

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export type ListOrder = 'asc' | 'desc';

/** A page as a client asks for it. At most one of the two cursors (the API refuses both). */
export interface PageRequest {
  limit: number;
  /** The id of the last object of the previous page. */
  startingAfter?: string;
  /** The id of the first object of the next page: pages backwards. */
  endingBefore?: string;
  /** Default `asc`: the list's natural order (creation, numbering or commit order). */
  order?: ListOrder;
}

/** Binds a value as the next query parameter and returns its placeholder (`$n`). */
export type BindParameter = (value: unknown) => string;

/** One condition of a list's filter over the listed alias; values only through `bind`. */
export type ListCondition = (bind: BindParameter) => string;

/** Where a list reads from, in which keyset order. */
export interface KeysetSource {
  /** The table the cursor is looked up in. */
  table: string;
  /** The alias `select` gives `table`; its `company_id` scopes every read. */
  alias: string;
  /** `SELECT … FROM table alias [JOIN …]`, without WHERE. */
  select: string;
  /** Keyset order, ending in a unique column. */
  orderKeys: readonly string[];
}

/**
 * A page of this company's rows of `source` matching every condition, in keyset order.
 * @throws Error when both cursors are given (the API validates that first)
 */
export async function keysetPage<Row, T>(
  db: Sql,
  source: KeysetSource,
  companyId: string,
  request: PageRequest,
  conditions: readonly ListCondition[],
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  if (request.startingAfter !== undefined && request.endingBefore !== undefined) {
    throw new Error('startingAfter and endingBefore are exclusive');
  }
  const { table, alias, select, orderKeys } = source;
  const parameters: unknown[] = [companyId];
  const bind: BindParameter = (value) => {
    parameters.push(value);
    return `$${parameters.length}`;
  };
  const where = [`${alias}.company_id = $1`, ...conditions.map((condition) => `(${condition(bind)})`)];
  const backwards = request.endingBefore !== undefined;
  // Scanning direction: the list's order, reversed when paging backwards (then flipped back).
  const descending = (request.order === 'desc') !== backwards;
  const cursor = request.endingBefore ?? request.startingAfter;
  if (cursor !== undefined) {
    const rowKeys = orderKeys.map((key) => `${alias}.${key}`).join(', ');
    const cursorKeys = orderKeys.map((key) => `cur.${key}`).join(', ');
    where.push(
      `(${rowKeys}) ${descending ? '<' : '>'} (
         SELECT ${cursorKeys} FROM ${table} cur WHERE cur.company_id = $1 AND cur.id = ${bind(cursor)}::uuid)`,
    );
  }
  const direction = descending ? 'DESC' : 'ASC';
  const rows = await db.query<Row>(
    `${select}
      WHERE ${where.join('\n        AND ')}
      ORDER BY ${orderKeys.map((key) => `${alias}.${key} ${direction}`).join(', ')}
      LIMIT ${bind(request.limit + 1)}`,
    parameters,
  );
  const page = pageOf(rows, request.limit, toItem);
  if (backwards) page.data.reverse();
  return page;
}

/** The page from rows fetched with `LIMIT limit + 1`. */
export function pageOf<Row, T>(rows: readonly Row[], limit: number, toItem: (row: Row) => T): Page<T> {
  return { data: rows.slice(0, limit).map(toItem), hasMore: rows.length > limit };
}
