import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { openMigrationDataSource, runMigrations } from '../../libs/database/src';
import { MIGRATIONS } from '../../migrations';
import { DocumentNamespacesSupplierIdentity1765000000000 } from '../../migrations/1765000000000-document-namespaces-supplier-identity';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';

const MIGRATION = DocumentNamespacesSupplierIdentity1765000000000;
const LEGACY_NAMED_BY_VAT = 2500;

function numbered(series: string, sequence: number): string {
  return `${series}-${String(sequence).padStart(6, '0')}`;
}

/** Orders like PostgreSQL's ORDER BY on uuid and text columns here (lower-case hex, ASCII). */
function byKey<T>(key: (row: T) => string[]): (x: T, y: T) => number {
  return (x, y) => {
    const [kx, ky] = [key(x).join('\u0000'), key(y).join('\u0000')];
    return kx < ky ? -1 : kx > ky ? 1 : 0;
  };
}

/**
 * The migration on a database written by the code before it: counters shared by invoices and
 * credit notes in series CN, invoices numbered in CN, purchase invoices without the identity
 * columns. It must carry all of it over, keep the old documents usable, and undo cleanly.
 */
describe('migration DocumentNamespacesSupplierIdentity1765000000000 on existing data', () => {
  const position = MIGRATIONS.indexOf(MIGRATION);
  let database: IsolatedDatabase;
  let db: Pool;
  let dataSource: DataSource;
  const a = randomUUID();
  const b = randomUUID();
  const c = randomUUID();

  async function invoice(company: string, series: string, sequence: number): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                             vat_breakdown, net_total, vat_total, gross_total, created_at)
       VALUES ($1, $2, $3, $4, $5, 'EUR', '2026-11-30', '{"name": "SQL"}', '[]', 100, 0, 100, now())`,
      [id, company, series, sequence, numbered(series, sequence)],
    );
    return id;
  }

  async function creditNote(company: string, invoiceId: string, sequence: number): Promise<void> {
    await db.query(
      `INSERT INTO credit_notes (id, company_id, invoice_id, series, sequence, number, reason, currency,
                                 vat_breakdown, net_total, vat_total, gross_total, created_at)
       VALUES ($1, $2, $3, 'CN', $4, $5, 'other', 'EUR', '[]', 1, 0, 1, now())`,
      [randomUUID(), company, invoiceId, sequence, numbered('CN', sequence)],
    );
  }

  async function counters() {
    const { rows } = await db.query(
      `SELECT company_id, document_type, series, last_value::int FROM document_sequences
        ORDER BY company_id, document_type, series`,
    );
    return rows;
  }

  function purchaseInvoiceSql(columns: string): string {
    return `INSERT INTO purchase_invoices (id, company_id, supplier, ${columns}, document_number, document_key,
                                           currency, issue_date, vat_breakdown, net_total, vat_total,
                                           gross_total, created_at, notes)`;
  }

  beforeAll(async () => {
    expect(position).toBeGreaterThan(0);
    database = await createIsolatedDatabase('namespaces_migration', {
      migrations: MIGRATIONS.slice(0, position),
      jobQueue: false,
    });
    db = isolatedDatabasePool(database, 2);

    for (const company of [a, b, c]) {
      await db.query(
        `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, 'Legacy', 'LT', 'EUR')`,
        [company],
      );
    }
    // A: INV-1, INV-2 and, through the shared CN counter, invoice CN-1, credit note CN-2, invoice CN-3.
    const inv1 = await invoice(a, 'INV', 1);
    await invoice(a, 'INV', 2);
    await invoice(a, 'CN', 1);
    await creditNote(a, inv1, 2);
    await invoice(a, 'CN', 3);
    // B: credit notes only in CN. C: invoices only in CN.
    const bInv1 = await invoice(b, 'INV', 1);
    await creditNote(b, bInv1, 1);
    await invoice(c, 'CN', 1);
    await invoice(c, 'CN', 2);
    await db.query(
      `INSERT INTO document_sequences (company_id, series, last_value)
       VALUES ($1, 'INV', 2), ($1, 'CN', 3), ($2, 'INV', 1), ($2, 'CN', 1), ($3, 'CN', 2)`,
      [a, b, c],
    );

    await db.query(
      `${purchaseInvoiceSql('supplier_key')}
       VALUES ($1, $2, '{"name": "UAB  Tiekėjas,", "vatId": "LT100009999999", "countryCode": "LT"}',
               'vat:LT100009999999', 'TK-2026/0042', 'TK-2026/0042', 'EUR', '2026-11-30', '[]', 0, 0, 0, now(), NULL),
              ($3, $2, '{"name": "Jonas", "vatId": null, "countryCode": "LT"}',
               'name:jonas', 'X-1', 'X-1', 'EUR', '2026-11-30', '[]', 0, 0, 0, now(), NULL)`,
      [randomUUID(), a, randomUUID()],
    );
    // More rows named by VAT id than one backfill batch holds; notes carry n for the check.
    await db.query(
      `${purchaseInvoiceSql('supplier_key')}
       SELECT gen_random_uuid(), $1,
              jsonb_build_object('name', '„Tiekėjas ' || n || '“', 'vatId', 'LT' || (200000000 + n), 'countryCode', 'LT'),
              'vat:LT' || (200000000 + n), 'B-' || n, 'B-' || n, 'EUR', '2026-11-30', '[]', 0, 0, 0, now(), n::text
         FROM generate_series(1, $2::int) AS n`,
      [b, LEGACY_NAMED_BY_VAT],
    );

    dataSource = await openMigrationDataSource({
      url: database.url,
      poolSize: 2,
      applicationName: 'ledgerkey-migration-test',
      migrations: MIGRATIONS.slice(0, position + 1),
    });
    expect(await runMigrations(dataSource)).toEqual([new MIGRATION().name]);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.end();
    await database?.drop();
  });

  it('splits the shared CN counter: each type continues after its own highest number', async () => {
    expect(await counters()).toEqual(
      [
        { company_id: a, document_type: 'credit_note', series: 'CN', last_value: 2 },
        { company_id: a, document_type: 'invoice', series: 'CN', last_value: 3 },
        { company_id: a, document_type: 'invoice', series: 'INV', last_value: 2 },
        { company_id: b, document_type: 'credit_note', series: 'CN', last_value: 1 },
        { company_id: b, document_type: 'invoice', series: 'INV', last_value: 1 },
        { company_id: c, document_type: 'invoice', series: 'CN', last_value: 2 },
      ].sort(byKey((row) => [row.company_id, row.document_type, row.series])),
    );
  });

  it('invoices already numbered in CN stay valid and can still be credited; no new one can be written', async () => {
    const { rows } = await db.query<{ convalidated: boolean }>(
      `SELECT convalidated FROM pg_constraint WHERE conname = 'ck_invoices_series_not_credit_note'`,
    );
    expect(rows).toEqual([{ convalidated: true }]);
    // Running totals change on old CN invoices (credit notes, settlements): the CHECK allows it.
    const updated = await db.query(
      `UPDATE invoices SET credited_total = 1, paid_total = 1 WHERE series = 'CN'`,
    );
    expect(updated.rowCount).toBe(4);
    await expect(invoice(a, 'CN', 4)).rejects.toMatchObject({
      code: '23514',
      constraint: 'ck_invoices_series_not_credit_note',
    });
    await expect(invoice(b, 'CN', 1)).rejects.toMatchObject({
      code: '23514',
      constraint: 'ck_invoices_series_not_credit_note',
    });
  });

  it('backfills supplier VAT id and normalized name from every existing purchase invoice', async () => {
    const { rows } = await db.query(
      `SELECT document_key, supplier_vat_id, supplier_name_key FROM purchase_invoices
        WHERE company_id = $1 ORDER BY document_key`,
      [a],
    );
    expect(rows).toEqual([
      { document_key: 'TK-2026/0042', supplier_vat_id: 'LT100009999999', supplier_name_key: 'uab tiekėjas' },
      { document_key: 'X-1', supplier_vat_id: null, supplier_name_key: 'jonas' },
    ]);
    const { rows: batch } = await db.query(
      `SELECT count(*)::int AS rows,
              count(*) FILTER (WHERE supplier_name_key = 'tiekėjas ' || notes
                                 AND supplier_vat_id = 'LT' || (200000000 + notes::int))::int AS backfilled
         FROM purchase_invoices WHERE company_id = $1`,
      [b],
    );
    expect(batch).toEqual([{ rows: LEGACY_NAMED_BY_VAT, backfilled: LEGACY_NAMED_BY_VAT }]);
  });

  it('the identity rule then holds against old rows, and purchase invoices are immutable again', async () => {
    await expect(
      db.query(
        `${purchaseInvoiceSql('supplier_key, supplier_vat_id, supplier_name_key')}
         VALUES ($1, $2, '{"name": "UAB Tiekėjas", "countryCode": "LT"}', 'name:uab tiekėjas', NULL,
                 'uab tiekėjas', 'TK-2026/0042', 'TK-2026/0042', 'EUR', '2026-11-30', '[]', 0, 0, 0, now(), NULL)`,
        [randomUUID(), a],
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'uq_purchase_invoices_supplier_identity' });
    await expect(
      db.query(`UPDATE purchase_invoices SET notes = 'changed' WHERE company_id = $1`, [a]),
    ).rejects.toMatchObject({
      code: '23000',
    });
  });

  it('down() restores one counter per (company, series), continuing after the higher of the two', async () => {
    await dataSource.undoLastMigration({ transaction: 'each' });

    const { rows } = await db.query(
      `SELECT company_id, series, last_value::int FROM document_sequences ORDER BY company_id, series`,
    );
    expect(rows).toEqual(
      [
        { company_id: a, series: 'CN', last_value: 3 },
        { company_id: a, series: 'INV', last_value: 2 },
        { company_id: b, series: 'CN', last_value: 1 },
        { company_id: b, series: 'INV', last_value: 1 },
        { company_id: c, series: 'CN', last_value: 2 },
      ].sort(byKey((row) => [row.company_id, row.series])),
    );
    const { rows: leftovers } = await db.query(
      `SELECT (SELECT count(*)::int FROM information_schema.columns
                WHERE table_name = 'purchase_invoices' AND column_name IN ('supplier_vat_id', 'supplier_name_key')) AS columns,
              (SELECT count(*)::int FROM pg_proc
                WHERE proname IN ('claim_supplier_document', 'refuse_duplicate_supplier_document')) AS functions,
              (SELECT count(*)::int FROM pg_constraint
                WHERE conname IN ('ck_invoices_series_not_credit_note', 'ck_credit_notes_series')) AS checks`,
    );
    expect(leftovers).toEqual([{ columns: 0, functions: 0, checks: 0 }]);
  });
});
