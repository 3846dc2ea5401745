import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { immutabilityCalls, immutable } from '../support/immutability-sql';
import { anInvoice } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * Acceptance: "an UPDATE of an invoice amount through SQL fails". The database itself (not
 * only the code) keeps issued documents and journal postings immutable and balanced.
 */
describe('immutability enforced by the database', () => {
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

  const { issueInvoice, storedInvoice, storedLines, inTransaction, insertInvoiceRow } = immutabilityCalls(
    () => ({ t, db }),
  );

  describe('invoices', () => {
    it.each([
      [
        'net_total and gross_total (kept consistent)',
        'net_total = net_total + 100, gross_total = gross_total + 100',
      ],
      [
        'vat_total and gross_total (kept consistent)',
        'vat_total = vat_total + 1, gross_total = gross_total + 1',
      ],
      ['customer', `customer = jsonb_set(customer, '{name}', '"Someone Else UAB"')`],
      ['number', `number = 'INV-999999'`],
      ['issue_date', `issue_date = issue_date - 1`],
      ['currency', `currency = 'USD'`],
      ['order_id', `order_id = 'another-order'`],
      ['notes', `notes = 'added later'`],
      ['seller (the profile snapshot)', `seller = jsonb_set(seller, '{vatId}', '"LT999999999999"')`],
    ])('UPDATE of %s is rejected by the trigger and changes nothing', async (_field, assignment) => {
      const company = await t.newCompany();
      const { invoice, text } = await issueInvoice(company);
      const before = await storedInvoice(invoice.id);

      await expect(
        db.query(`UPDATE invoices SET ${assignment} WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23000',
        message: `issued invoice ${invoice.id} is immutable; correct it with a credit note`,
      });

      expect(await storedInvoice(invoice.id)).toBe(before);
      const fetched = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
      expect(fetched.text).toBe(text);
    });

    it('DELETE is rejected by the trigger and the invoice stays', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const before = await storedInvoice(invoice.id);

      await expect(db.query(`DELETE FROM invoices WHERE id = $1`, [invoice.id])).rejects.toMatchObject({
        code: '23000',
        message: `issued invoice ${invoice.id} cannot be deleted`,
      });

      expect(await storedInvoice(invoice.id)).toBe(before);
    });

    it('running totals (credited_total, paid_total) may change within their CHECKs, never beyond', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(
        company,
        anInvoice().withLine({ quantity: '1', unitPrice: 10000 }).build(),
      );
      expect(invoice.grossTotal).toBe(12100);
      const documentFields = async () =>
        (
          await db.query<{ row: string }>(
            `SELECT (to_jsonb(i) - 'credited_total' - 'paid_total')::text AS row FROM invoices i WHERE id = $1`,
            [invoice.id],
          )
        ).rows[0].row;
      const before = await documentFields();

      await db.query(`UPDATE invoices SET credited_total = 2100 WHERE id = $1`, [invoice.id]);
      await db.query(`UPDATE invoices SET paid_total = gross_total - credited_total WHERE id = $1`, [
        invoice.id,
      ]);

      const fetched = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
      expect(fetched.body).toMatchObject({ creditedTotal: 2100, paidTotal: 10000, grossTotal: 12100 });

      await expect(
        db.query(`UPDATE invoices SET credited_total = gross_total + 1, paid_total = 0 WHERE id = $1`, [
          invoice.id,
        ]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: expect.stringMatching(/^ck_invoices_(credited|paid)$/),
      });
      await expect(
        db.query(`UPDATE invoices SET credited_total = -1 WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: 'ck_invoices_credited',
      });
      // Paid and credited are bounded separately (a paid invoice may still be credited: refund).
      await db.query(`UPDATE invoices SET paid_total = gross_total WHERE id = $1`, [invoice.id]);
      await expect(
        db.query(`UPDATE invoices SET paid_total = gross_total + 1 WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: 'ck_invoices_paid',
      });

      const { rows } = await db.query(
        `SELECT credited_total::int, paid_total::int FROM invoices WHERE id = $1`,
        [invoice.id],
      );
      expect(rows).toEqual([{ credited_total: 2100, paid_total: 12100 }]);
      expect(await documentFields()).toBe(before);
    });

    it('a duplicate (company, series, sequence) is rejected by uq_invoices_company_series_sequence', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      expect(invoice.number).toBe('INV-000001');

      await expect(
        insertInvoiceRow(db, company.companyId, { sequence: 1, orderId: null }),
      ).rejects.toMatchObject({
        code: '23505',
        constraint: 'uq_invoices_company_series_sequence',
      });
      await expect(
        inTransaction(async (client) => {
          await insertInvoiceRow(client, company.companyId, { sequence: 2, orderId: null });
          throw new Error('valid row inserted; rolling back');
        }),
      ).rejects.toThrow('valid row inserted; rolling back');

      const { rows } = await db.query(`SELECT number FROM invoices WHERE company_id = $1`, [
        company.companyId,
      ]);
      expect(rows).toEqual([{ number: 'INV-000001' }]);
    });

    it('two invoices for one order_id in one company are rejected by uq_invoices_company_order', async () => {
      const company = await t.newCompany();
      const orderId = `order-${randomUUID()}`;
      await issueInvoice(company, anInvoice().withOrderId(orderId).withLine().build());

      await expect(insertInvoiceRow(db, company.companyId, { sequence: 2, orderId })).rejects.toMatchObject({
        code: '23505',
        constraint: 'uq_invoices_company_order',
      });

      const { rows } = await db.query(
        `SELECT count(*)::int AS count FROM invoices WHERE company_id = $1 AND order_id = $2`,
        [company.companyId, orderId],
      );
      expect(rows).toEqual([{ count: 1 }]);
      const otherCompany = await t.newCompany();
      const { invoice: other } = await issueInvoice(
        otherCompany,
        anInvoice().withOrderId(orderId).withLine().build(),
      );
      expect(other.number).toBe('INV-000001');
    });
  });

  describe('invoice lines', () => {
    it.each([
      ['net_amount', 'net_amount = net_amount + 1'],
      ['quantity', 'quantity = quantity * 2'],
      ['unit_price', 'unit_price = 1'],
      ['description', `description = 'Something else'`],
    ])('UPDATE of %s is rejected and changes nothing', async (_field, assignment) => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const before = await storedLines(invoice.id);

      await expect(
        db.query(`UPDATE invoice_lines SET ${assignment} WHERE invoice_id = $1`, [invoice.id]),
      ).rejects.toMatchObject(immutable('invoice_lines'));

      expect(await storedLines(invoice.id)).toBe(before);
    });

    it('DELETE is rejected and the lines stay', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(
        company,
        anInvoice().withLine().withLine({ unitPrice: 1 }).build(),
      );
      const before = await storedLines(invoice.id);
      expect(JSON.parse(before)).toHaveLength(2);

      await expect(
        db.query(`DELETE FROM invoice_lines WHERE invoice_id = $1`, [invoice.id]),
      ).rejects.toMatchObject(immutable('invoice_lines'));

      expect(await storedLines(invoice.id)).toBe(before);
    });
  });

  describe('HTTP', () => {
    it.each([
      { name: 'PUT', method: 'put' },
      { name: 'PATCH', method: 'patch' },
      { name: 'DELETE', method: 'delete' },
    ] as const)(
      '$name /v1/sales/invoices/{id} has no route (404 not_found) and the invoice is unchanged',
      async ({ method }) => {
        const company = await t.newCompany();
        const { invoice, text } = await issueInvoice(company);
        const before = await storedInvoice(invoice.id);

        const response = await t.http[method](`/v1/sales/invoices/${invoice.id}`)
          .set(company.auth)
          .send({ netTotal: 1, grossTotal: 1, customer: { name: 'Someone Else UAB', countryCode: 'LT' } });

        expect(response.status).toBe(404);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(JSON.parse(response.text)).toMatchObject({ status: 404, code: 'not_found' });
        expect(await storedInvoice(invoice.id)).toBe(before);
        expect((await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth)).text).toBe(text);
      },
    );
  });
});
