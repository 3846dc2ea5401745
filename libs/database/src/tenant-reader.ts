import { afterCursorSql, orderBySql, type Page, pageOf } from './keyset-page';

/** What the reads need of a connection; TypeORM's EntityManager (a repository's `txHost.tx`) fits. */
export interface SqlQueryable {
  query<T>(sql: string, parameters?: unknown[]): Promise<T>;
}

/**
 * The two reads every document table has, always within one company: one row by id, and a
 * keyset page. Run on the connection the caller passes (a repository passes its transaction
 * host's current transaction). Table, alias, SELECT and keys are constants of the
 * repositories, never input.
 */
export class TenantReader<Row, View> {
  /**
   * @param table the table the page cursor is looked up in
   * @param alias the alias `select` gives `table`; its `company_id` and `id` scope every read
   * @param select `SELECT … FROM table alias [JOIN …]`, without WHERE
   * @param orderKeys keyset order of lists, ending in a unique column (see keyset-page.ts)
   * @param toView the row mapper
   */
  constructor(
    private readonly table: string,
    private readonly alias: string,
    private readonly select: string,
    private readonly orderKeys: readonly string[],
    private readonly toView: (row: Row) => View,
  ) {}

  /** @returns the row of this company with this id, or null (also for another company's id) */
  async findById(db: SqlQueryable, companyId: string, id: string): Promise<View | null> {
    const rows = await db.query<Row[]>(
      `${this.select} WHERE ${this.alias}.company_id = $1 AND ${this.alias}.id = $2`,
      [companyId, id],
    );
    return rows[0] ? this.toView(rows[0]) : null;
  }

  /**
   * A page in keyset order, after the row `startingAfter` of this company. An unknown cursor
   * id yields an empty page rather than restarting from the beginning.
   */
  async list(
    db: SqlQueryable,
    companyId: string,
    limit: number,
    startingAfter?: string,
  ): Promise<Page<View>> {
    const rows = await db.query<Row[]>(
      `${this.select}
        WHERE ${this.alias}.company_id = $1
          AND ${afterCursorSql(this.table, this.alias, this.orderKeys, 2)}
        ${orderBySql(this.alias, this.orderKeys)}
        LIMIT $3`,
      [companyId, startingAfter ?? null, limit + 1],
    );
    return pageOf(rows, limit, this.toView);
  }
}
