import type { Sql } from './sql';
import {
  type KeysetSource,
  keysetPage,
  type ListCondition,
  type Page,
  type PageRequest,
} from './keyset-page';

/**
 * The two reads every document table has, always within one company: one row by id, and a
 * keyset page. Run on the connection the caller passes (a repository passes its transaction
 * host's current transaction). Table, alias, SELECT and keys are constants of the
 * repositories, never input.
 */
export class TenantReader<Row, View> {
  private readonly source: KeysetSource;

  /**
   * @param table the table the page cursor is looked up in
   * @param alias the alias `select` gives `table`; its `company_id` and `id` scope every read
   * @param select `SELECT … FROM table alias [JOIN …]`, without WHERE
   * @param orderKeys keyset order of lists, ending in a unique column (see keyset-page.ts)
   * @param toView the row mapper
   */
  constructor(
    table: string,
    private readonly alias: string,
    private readonly select: string,
    orderKeys: readonly string[],
    private readonly toView: (row: Row) => View,
  ) {
    this.source = { table, alias, select, orderKeys };
  }

  /** @returns the row of this company with this id, or null (also for another company's id) */
  async findById(db: Sql, companyId: string, id: string): Promise<View | null> {
    const rows = await db.query<Row>(
      `${this.select} WHERE ${this.alias}.company_id = $1 AND ${this.alias}.id = $2`,
      [companyId, id],
    );
    return rows[0] ? this.toView(rows[0]) : null;
  }

  /**
   * A page in keyset order (or its reverse), of the rows matching every condition. An unknown
   * cursor id yields an empty page rather than restarting from the beginning.
   */
  list(
    db: Sql,
    companyId: string,
    request: PageRequest,
    conditions: readonly ListCondition[] = [],
  ): Promise<Page<View>> {
    return keysetPage(db, this.source, companyId, request, conditions, this.toView);
  }
}
