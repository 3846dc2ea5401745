import type { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { afterCursorSql, orderBySql, type Page, pageOf } from './keyset-page';

/** How a tenant table is read: its SELECT, the keyset order of its lists, its row mapper. */
export interface TenantReadModel<Row, View> {
  table: string;
  /** The alias `select` gives `table`; its `company_id` and `id` scope every read. */
  alias: string;
  /** `SELECT … FROM table alias [JOIN …]`, without WHERE. */
  select: string;
  /** Keyset order of lists; ends in a unique column (see keyset-page.ts). */
  orderKeys: readonly string[];
  toView(row: Row): View;
}

/**
 * The two reads every document table has, always within one company: one row by id, and a
 * keyset page. Runs in the caller's transaction (the transaction host's current one) or, with
 * none open, on its own. Table, alias, SELECT and keys are constants of the repositories,
 * never input.
 */
export class TenantReader<Row, View> {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly model: TenantReadModel<Row, View>,
  ) {}

  /** @returns the row of this company with this id, or null (also for another company's id) */
  async findById(companyId: string, id: string): Promise<View | null> {
    const { alias, select, toView } = this.model;
    const rows = await this.txHost.tx.query<Row[]>(
      `${select} WHERE ${alias}.company_id = $1 AND ${alias}.id = $2`,
      [companyId, id],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  /**
   * A page in the model's keyset order, after the row `startingAfter` of this company. An
   * unknown cursor id yields an empty page rather than restarting from the beginning.
   */
  async list(companyId: string, limit: number, startingAfter?: string): Promise<Page<View>> {
    const { table, alias, select, orderKeys, toView } = this.model;
    const rows = await this.txHost.tx.query<Row[]>(
      `${select}
        WHERE ${alias}.company_id = $1
          AND ${afterCursorSql(table, alias, orderKeys, 2)}
        ${orderBySql(alias, orderKeys)}
        LIMIT $3`,
      [companyId, startingAfter ?? null, limit + 1],
    );
    return pageOf(rows, limit, toView);
  }
}
