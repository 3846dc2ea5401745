import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { Metadata1766200000000 } from '../../migrations/1766200000000-metadata';
import { createIsolatedDatabase, type IsolatedDatabase } from '../support/isolated-database';
import { INVALID_METADATA, VALID_METADATA } from '../support/metadata-cases';
import { SQL_SELLER } from '../support/sql-fixtures';

/**
 * The metadata migration on a database of its own: rows written before it get `{}` and stay
 * valid, the bounds hold in the schema, issued invoices stay immutable (metadata included) while
 * their running totals still change, and `down()` goes back.
 */
describe('migration Metadata1766200000000', () => {
  const index = MIGRATIONS.indexOf(Metadata1766200000000);
  let database: IsolatedDatabase | undefined;
  let dataSource: DataSource | undefined;

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('gives existing rows {}, bounds new metadata, keeps invoices immutable, and goes back down', async () => {
    expect(index).toBeGreaterThan(0);
    database = await createIsolatedDatabase('metadata_migration', { migrations: MIGRATIONS.slice(0, index) });
    const before = await connect(database.url, MIGRATIONS.slice(0, index));
    const [company, invoice] = [randomUUID(), randomUUID()];
    await before.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'UAB Testas', 'LT', 'EUR')`,
      [company],
    );
    await before.query(
      `INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                             vat_breakdown, net_total, vat_total, gross_total, created_at, seller)
       VALUES ($1, $2, 'INV', 1, 'INV-000001', 'EUR', '2026-12-01', '{"name": "Customer"}', '[]', 2000, 420, 2420, now(), $3)`,
      [invoice, company, SQL_SELLER],
    );
    await before.destroy();

    dataSource = await connect(database.url, MIGRATIONS.slice(0, index + 1));
    expect((await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name)).toEqual([
      'Metadata1766200000000',
    ]);
    expect(await dataSource.query('SELECT metadata FROM invoices WHERE id = $1', [invoice])).toEqual([
      { metadata: {} },
    ]);
    for (const table of [
      'credit_notes',
      'settlements',
      'purchase_invoices',
      'payments',
      'webhook_endpoints',
    ]) {
      const [column] = await dataSource.query<Array<{ is_nullable: string; column_default: string }>>(
        `SELECT is_nullable, column_default FROM information_schema.columns WHERE table_name = $1 AND column_name = 'metadata'`,
        [table],
      );
      expect({ table, ...column }).toEqual({ table, is_nullable: 'NO', column_default: "'{}'::jsonb" });
    }

    // Running totals still move; metadata does not, like every other document field.
    await dataSource.query('UPDATE invoices SET paid_total = 100 WHERE id = $1', [invoice]);
    await expect(
      dataSource.query(`UPDATE invoices SET metadata = '{"a": "b"}' WHERE id = $1`, [invoice]),
    ).rejects.toThrow(/immutable/);
    // The guard it replaces kept the seller snapshot immutable (CompanyProfileSellerSnapshot): still so.
    await expect(
      dataSource.query(`UPDATE invoices SET seller = seller || '{"legalName": "Other"}' WHERE id = $1`, [
        invoice,
      ]),
    ).rejects.toThrow(/immutable/);

    const valid = (metadata: unknown) =>
      dataSource!.query<Array<{ ok: boolean }>>('SELECT is_valid_metadata($1::jsonb) AS ok', [
        JSON.stringify(metadata),
      ]);
    for (const good of VALID_METADATA) {
      expect({ good, result: await valid(good) }).toEqual({ good, result: [{ ok: true }] });
    }
    for (const bad of INVALID_METADATA) {
      expect({ bad, result: await valid(bad) }).toEqual({ bad, result: [{ ok: false }] });
    }

    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await dataSource.query(`SELECT to_regprocedure('is_valid_metadata(jsonb)') AS f`)).toEqual([
      { f: null },
    ]);
    // The previous guard is back: running totals still move.
    await dataSource.query('UPDATE invoices SET paid_total = 200 WHERE id = $1', [invoice]);
    await expect(
      dataSource.query(`UPDATE invoices SET notes = 'x' WHERE id = $1`, [invoice]),
    ).rejects.toThrow(/immutable/);
  });
});

function connect(url: string, migrations: typeof MIGRATIONS): Promise<DataSource> {
  return openMigrationDataSource({
    url,
    poolSize: 2,
    applicationName: 'ledgerkey-test-migration',
    migrations,
  });
}
