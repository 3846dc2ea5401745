import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

interface Totals {
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
}

describe('credit notes', () => {
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

  /** 2 × 5000 at 21 % and 1 × 3000 at 9 %: net 13000, VAT 2100 + 270, gross 15370. */
  async function issueInvoice(company: TestCompany): Promise<{ id: string; number: string } & Totals> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(
        anInvoice()
          .withLine({ quantity: '2', unitPrice: 5000, vatRate: '21' })
          .withLine({ description: 'Book', quantity: '1', unitPrice: 3000, vatRate: '9' })
          .build(),
      );
    expect(response.status).toBe(201);
    expect(response.body.grossTotal).toBe(15370);
    return response.body;
  }

  function credit(company: TestCompany, body: Record<string, unknown>, key = newKey()) {
    return t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
  }

  async function ledgerBalanced(companyId: string): Promise<{ debit: number; credit: number }> {
    const { rows } = await db.query(
      `SELECT coalesce(sum(debit), 0)::int AS debit, coalesce(sum(credit), 0)::int AS credit
         FROM journal_lines WHERE company_id = $1`,
      [companyId],
    );
    return rows[0];
  }

  it('credits everything when no lines are given: the invoice and its credit note net to zero', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);

    const response = await credit(company, {
      invoiceId: invoice.id,
      reason: 'duplicate',
      memo: 'issued twice',
    });

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`/v1/sales/credit-notes/${response.body.id}`);
    expect(response.body).toMatchObject({
      object: 'credit_note',
      number: 'CN-000001',
      series: 'CN',
      sequence: 1,
      invoiceId: invoice.id,
      invoiceNumber: invoice.number,
      reason: 'duplicate',
      memo: 'issued twice',
      currency: 'EUR',
      vatBreakdown: [
        { vatRate: '21', netAmount: 10000, vatAmount: 2100 },
        { vatRate: '9', netAmount: 3000, vatAmount: 270 },
      ],
      netTotal: 13000,
      vatTotal: 2370,
      grossTotal: 15370,
    });
    const fetched = await t.http.get(`/v1/sales/credit-notes/${response.body.id}`).set(company.auth);
    expect(fetched.text).toBe(response.text);
    const invoiceAfter = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
    expect(invoiceAfter.body.creditedTotal).toBe(15370);

    const { rows } = await db.query(
      `SELECT account, sum(debit)::int - sum(credit)::int AS balance
         FROM journal_lines WHERE company_id = $1 GROUP BY account ORDER BY account`,
      [company.companyId],
    );
    expect(rows).toEqual([
      { account: 'accounts_receivable', balance: 0 },
      { account: 'revenue', balance: 0 },
      { account: 'vat_payable', balance: 0 },
    ]);
  });

  it('credits part of an invoice, then the rest exactly, then refuses more', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);

    const partial = await credit(company, {
      invoiceId: invoice.id,
      reason: 'product_unsatisfactory',
      lines: [{ description: 'Refund 1 h', quantity: '1', unitPrice: 5000, vatRate: '21' }],
    });
    expect(partial.status).toBe(201);
    expect(partial.body).toMatchObject({
      number: 'CN-000001',
      netTotal: 5000,
      vatTotal: 1050,
      grossTotal: 6050,
    });

    const rest = await credit(company, { invoiceId: invoice.id, reason: 'other' });
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({
      number: 'CN-000002',
      vatBreakdown: [
        { vatRate: '21', netAmount: 5000, vatAmount: 1050 },
        { vatRate: '9', netAmount: 3000, vatAmount: 270 },
      ],
      grossTotal: 9320,
    });

    const more = await credit(company, { invoiceId: invoice.id, reason: 'other' });
    expect(more.status).toBe(422);
    expect(more.body.code).toBe('credit_exceeds_invoice');
    const invoiceAfter = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
    expect(invoiceAfter.body.creditedTotal).toBe(invoice.grossTotal);
    const balance = await ledgerBalanced(company.companyId);
    expect(balance.debit).toBe(balance.credit);
  });

  it.each([
    ['a rate the invoice lacks', [{ description: 'x', quantity: '1', unitPrice: 100, vatRate: '5' }]],
    [
      'more net than the invoice has at a rate',
      [{ description: 'x', quantity: '1', unitPrice: 3001, vatRate: '9' }],
    ],
  ])('refuses %s with 422 credit_exceeds_invoice, stored and replayed', async (_name, lines) => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);
    const key = newKey();

    const first = await credit(company, { invoiceId: invoice.id, reason: 'other', lines }, key);
    const retry = await credit(company, { invoiceId: invoice.id, reason: 'other', lines }, key);

    expect(first.status).toBe(422);
    expect(first.body.code).toBe('credit_exceeds_invoice');
    expect(retry.status).toBe(422);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(first.text);
    const { rows } = await db.query(`SELECT count(*)::int AS count FROM credit_notes WHERE company_id = $1`, [
      company.companyId,
    ]);
    expect(rows[0].count).toBe(0);
  });

  it('refuses a credit note that credits nothing (422 credit_note_empty)', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);
    const response = await credit(company, {
      invoiceId: invoice.id,
      reason: 'other',
      lines: [{ description: 'nothing', quantity: '1', unitPrice: 0, vatRate: '21' }],
    });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('credit_note_empty');
  });

  it('replays byte-identically and refuses the key with another payload', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);
    const key = newKey();
    const body = { invoiceId: invoice.id, reason: 'order_change' };

    const first = await credit(company, body, key);
    const replay = await credit(
      company,
      { reason: 'order_change', invoiceId: invoice.id.toUpperCase() },
      key,
    );
    const changed = await credit(company, { ...body, memo: 'changed' }, key);

    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(changed.status).toBe(422);
    expect(changed.body.code).toBe('idempotency_key_reused');
    const { rows } = await db.query(`SELECT count(*)::int AS count FROM credit_notes WHERE company_id = $1`, [
      company.companyId,
    ]);
    expect(rows[0].count).toBe(1);
  });

  it("answers 404 for another company's invoice and stores that answer", async () => {
    const owner = await t.newCompany();
    const other = await t.newCompany();
    const invoice = await issueInvoice(owner);

    const response = await credit(other, { invoiceId: invoice.id, reason: 'other' });

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('not_found');
    const invoiceAfter = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(owner.auth);
    expect(invoiceAfter.body.creditedTotal).toBe(0);
  });

  it('validates the body before the key (400, nothing stored)', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const bad = await credit(company, { invoiceId: 'nope', reason: 'whim' }, key);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect(bad.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      'invoiceId',
      'reason',
    ]);
    const { rows } = await db.query(
      `SELECT count(*)::int AS count FROM idempotency_records WHERE company_id = $1 AND idempotency_key = $2`,
      [company.companyId, key],
    );
    expect(rows[0].count).toBe(0);
  });

  it('20 parallel partial credits that together exceed the invoice: committed ones never exceed it, CN gapless', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);
    // Each credits 1000 net at 21 % (VAT 210): at most 10 fit in the 10000 net at that rate.
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        credit(company, {
          invoiceId: invoice.id,
          reason: 'other',
          lines: [{ description: 'part', quantity: '1', unitPrice: 1000, vatRate: '21' }],
        }),
      ),
    );

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 422)).toHaveLength(10);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(response.body.code).toBe('credit_exceeds_invoice');
    }
    const { rows } = await db.query(
      `SELECT sequence::int, gross_total::int FROM credit_notes WHERE company_id = $1 ORDER BY sequence`,
      [company.companyId],
    );
    expect(rows.map((row: { sequence: number }) => row.sequence)).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 1),
    );
    const creditedGross = rows.reduce(
      (sum: number, row: { gross_total: number }) => sum + row.gross_total,
      0,
    );
    expect(creditedGross).toBe(12100);
    const invoiceAfter = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
    expect(invoiceAfter.body.creditedTotal).toBe(12100);
    const balance = await ledgerBalanced(company.companyId);
    expect(balance.debit).toBe(balance.credit);
  });

  it('lists credit notes by number with cursor pages', async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company);
    for (let i = 0; i < 3; i += 1) {
      const response = await credit(company, {
        invoiceId: invoice.id,
        reason: 'other',
        lines: [{ description: `part ${i}`, quantity: '1', unitPrice: 100, vatRate: '9' }],
      });
      expect(response.status).toBe(201);
    }
    const first = await t.http.get('/v1/sales/credit-notes?limit=2').set(company.auth);
    const second = await t.http
      .get(`/v1/sales/credit-notes?limit=2&startingAfter=${first.body.data[1].id}`)
      .set(company.auth);
    expect(first.body.data.map((note: { number: string }) => note.number)).toEqual([
      'CN-000001',
      'CN-000002',
    ]);
    expect(first.body.hasMore).toBe(true);
    expect(second.body.data.map((note: { number: string }) => note.number)).toEqual(['CN-000003']);
    expect(second.body.hasMore).toBe(false);
    const unknown = await t.http.get(`/v1/sales/credit-notes/${randomUUID()}`).set(company.auth);
    expect(unknown.status).toBe(404);
  });
});
