import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, quoteIdentifier } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { Metadata1766200000000 } from '../../migrations/1766200000000-metadata';
import { testDatabaseState } from '../support/test-database';

/**
 * The metadata migration on a database of its own: rows written before it get `{}` and stay
 * valid, the bounds hold in the schema, issued invoices stay immutable (metadata included) while
 * their running totals still change, and `down()` goes back.
 */
describe('migration Metadata1766200000000', () => {
  const state = testDatabaseState();
  const name = `${state.name}_metadata`;
  let url: string;
  let dataSource: DataSource | undefined;

  async function admin(sql: string): Promise<void> {
    const client = new Client({ connectionString: state.adminUrl });
    await client.connect();
    await client.query(sql);
    await client.end();
  }

  function connect(migrations: typeof MIGRATIONS): Promise<DataSource> {
    return createDataSource({
      url,
      poolSize: 2,
      applicationName: 'ledgerkey-test-migration',
      migrations,
    }).initialize();
  }

  beforeAll(async () => {
    await admin(`CREATE DATABASE ${quoteIdentifier(name)}`);
    const address = new URL(state.adminUrl);
    address.pathname = `/${name}`;
    url = address.toString();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await admin(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
  });

  it('gives existing rows {}, bounds new metadata, keeps invoices immutable, and goes back down', async () => {
    const index = MIGRATIONS.indexOf(Metadata1766200000000);
    expect(index).toBeGreaterThan(0);
    const before = await connect(MIGRATIONS.slice(0, index));
    await before.runMigrations({ transaction: 'each' });
    const [company, invoice] = [randomUUID(), randomUUID()];
    await before.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'UAB Testas', 'LT', 'EUR')`,
      [company],
    );
    await before.query(
      `INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                             vat_breakdown, net_total, vat_total, gross_total, created_at)
       VALUES ($1, $2, 'INV', 1, 'INV-000001', 'EUR', '2026-12-01', '{"name": "Customer"}', '[]', 2000, 420, 2420, now())`,
      [invoice, company],
    );
    await before.destroy();

    dataSource = await connect(MIGRATIONS.slice(0, index + 1));
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

    const valid = (metadata: unknown) =>
      dataSource!.query<Array<{ ok: boolean }>>('SELECT is_valid_metadata($1::jsonb) AS ok', [
        JSON.stringify(metadata),
      ]);
    expect(await valid({ a: 'b' })).toEqual([{ ok: true }]);
    expect(await valid({})).toEqual([{ ok: true }]);
    expect(
      await valid(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(500)]))),
    ).toEqual([{ ok: true }]);
    for (const bad of [
      [],
      { a: 1 },
      { '': 'x' },
      { 'a[b]': 'x' },
      { ['k'.repeat(41)]: 'x' },
      { a: 'v'.repeat(501) },
    ]) {
      expect({ bad, result: await valid(bad) }).toEqual({ bad, result: [{ ok: false }] });
    }
    expect(await valid(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])))).toEqual([
      { ok: false },
    ]);

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
