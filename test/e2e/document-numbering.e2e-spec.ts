import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { SQL_SELLER } from '../support/sql-fixtures';
import { testDatabasePool } from '../support/test-database';

/**
 * Numbering is gapless per (company, document type, series), and the series CN belongs to
 * credit notes: an invoice may not take it, so invoices and credit notes never interleave in
 * one counter and a printed number names one document.
 */
describe('document numbering: one namespace per document type', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  function issue(company: TestCompany, body: Record<string, unknown>, key = newKey()): Promise<Response> {
    return t.http.post('/v1/sales/invoices/create').set(company.auth).set('Idempotency-Key', key).send(body);
  }

  async function issuedNumber(company: TestCompany, body: Record<string, unknown>): Promise<string> {
    const response = await issue(company, body);
    expect(response.status).toBe(201);
    return (response.body as { number: string }).number;
  }

  async function creditNoteNumber(company: TestCompany, invoiceNumber: string): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM invoices WHERE company_id = $1 AND number = $2',
      [company.companyId, invoiceNumber],
    );
    const response = await t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        invoiceId: rows[0].id,
        reason: 'other',
        lines: [{ description: 'Partial refund', quantity: '1', unitPrice: 100, vatRate: '21' }],
      });
    expect(response.status).toBe(201);
    return (response.body as { number: string }).number;
  }

  async function countersOf(company: TestCompany) {
    const { rows } = await db.query(
      `SELECT document_type, series, last_value::int FROM document_sequences
        WHERE company_id = $1 ORDER BY document_type, series`,
      [company.companyId],
    );
    return rows;
  }

  it('the issue\'s sequence: an invoice in series "CN" is refused (400 on series), and invoices and credit notes stay gapless', async () => {
    const company = await t.newCompany();
    const inCreditNoteSeries = () => anInvoice().with({ series: 'CN' }).withLine().build();
    const numbers: string[] = [];

    // Today: invoice CN-000001, then credit note CN-000002, then invoice CN-000003.
    const key = newKey();
    const refused = await issue(company, inCreditNoteSeries(), key);
    numbers.push(await issuedNumber(company, anInvoice().withLine().build()));
    numbers.push(await creditNoteNumber(company, 'INV-000001'));
    const refusedAgain = await issue(company, inCreditNoteSeries());
    numbers.push(await issuedNumber(company, anInvoice().withLine().build()));
    numbers.push(await creditNoteNumber(company, 'INV-000002'));

    for (const response of [refused, refusedAgain]) {
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(response.text)).toMatchObject({
        code: 'validation_failed',
        errors: [
          {
            field: 'series',
            message: 'CN is reserved for credit notes; choose another series for invoices',
          },
        ],
      });
    }
    expect(numbers).toEqual(['INV-000001', 'CN-000001', 'INV-000002', 'CN-000002']);
    const { rows: invoices } = await db.query(
      'SELECT number FROM invoices WHERE company_id = $1 ORDER BY series, sequence',
      [company.companyId],
    );
    expect(invoices).toEqual([{ number: 'INV-000001' }, { number: 'INV-000002' }]);
    expect(await countersOf(company)).toEqual([
      { document_type: 'credit_note', series: 'CN', last_value: 2 },
      { document_type: 'invoice', series: 'INV', last_value: 2 },
    ]);
    // A schema failure stores nothing under the key: the client may fix the series and retry.
    const retried = await issue(company, anInvoice().with({ series: 'B2B' }).withLine().build(), key);
    expect(retried.status).toBe(201);
    expect(retried.body.number).toBe('B2B-000001');
  });

  it('only CN itself is reserved: series that merely start with it number on their own', async () => {
    const company = await t.newCompany();
    const number = await issuedNumber(company, anInvoice().with({ series: 'CN2' }).withLine().build());
    expect(number).toBe('CN2-000001');
    expect(await countersOf(company)).toEqual([{ document_type: 'invoice', series: 'CN2', last_value: 1 }]);
  });

  describe('in the schema', () => {
    it('the counter key is (company_id, document_type, series)', async () => {
      const { rows } = await db.query<{ column: string }>(
        `SELECT a.attname AS column
           FROM pg_constraint c
           CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
          WHERE c.conrelid = 'document_sequences'::regclass AND c.contype = 'p'
            AND c.conname = 'pk_document_sequences'
          ORDER BY k.position`,
      );
      expect(rows.map((row) => row.column)).toEqual(['company_id', 'document_type', 'series']);
    });

    it('an invoice counter and a credit-note counter of one series are two rows; unknown types are refused', async () => {
      const company = await t.newCompany();
      await db.query(
        `INSERT INTO document_sequences (company_id, document_type, series, last_value)
         VALUES ($1, 'invoice', 'X1', 5), ($1, 'credit_note', 'X1', 7)`,
        [company.companyId],
      );
      expect(await countersOf(company)).toEqual([
        { document_type: 'credit_note', series: 'X1', last_value: 7 },
        { document_type: 'invoice', series: 'X1', last_value: 5 },
      ]);
      await expect(
        db.query(
          `INSERT INTO document_sequences (company_id, document_type, series, last_value)
           VALUES ($1, 'payment', 'X1', 1)`,
          [company.companyId],
        ),
      ).rejects.toMatchObject({ code: '23514', constraint: 'ck_document_sequences_document_type' });
    });

    function insertInvoice(companyId: string, series: string) {
      return db.query(
        `INSERT INTO invoices (id, company_id, series, sequence, number, currency, issue_date, customer,
                               vat_breakdown, net_total, vat_total, gross_total, created_at, seller)
         VALUES ($1, $2, $3, 1, $3 || '-000001', 'EUR', '2026-11-30', '{"name": "SQL"}', '[]', 0, 0, 0, now(), $4)
         RETURNING id`,
        [randomUUID(), companyId, series, SQL_SELLER],
      );
    }

    it('an invoice written through SQL in series CN is refused (ck_invoices_series_not_credit_note)', async () => {
      const company = await t.newCompany();
      await expect(insertInvoice(company.companyId, 'CN')).rejects.toMatchObject({
        code: '23514',
        constraint: 'ck_invoices_series_not_credit_note',
      });
      await expect(insertInvoice(company.companyId, 'CN3')).resolves.toMatchObject({ rowCount: 1 });
    });

    it('a credit note written through SQL outside series CN is refused (ck_credit_notes_series)', async () => {
      const company = await t.newCompany();
      const {
        rows: [invoice],
      } = await insertInvoice(company.companyId, 'INV');
      await expect(
        db.query(
          `INSERT INTO credit_notes (id, company_id, invoice_id, series, sequence, number, reason, currency,
                                     vat_breakdown, net_total, vat_total, gross_total, created_at, seller)
           VALUES ($1, $2, $3, 'INV', 1, 'INV-000001', 'other', 'EUR', '[]', 1, 0, 1, now(), $4)`,
          [randomUUID(), company.companyId, invoice.id, SQL_SELLER],
        ),
      ).rejects.toMatchObject({ code: '23514', constraint: 'ck_credit_notes_series' });
    });
  });
});
