import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { expectProblem, tenancyCalls } from '../support/tenancy-calls';
import { testDatabasePool } from '../support/test-database';

describe('tenancy', () => {
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

  const { issueInvoice, count } = tenancyCalls(() => ({ t, db }));

  describe('every /v1 route answers 401 unauthorized without a valid API key', () => {
    type Route = {
      name: string;
      call: (authorization: string | undefined, ctx: RouteContext) => Promise<Response>;
    };
    type RouteContext = { invoiceId: string; idempotencyKey: string };

    const withAuth = (
      pending: ReturnType<TestApp['http']['get']>,
      authorization: string | undefined,
    ): ReturnType<TestApp['http']['get']> =>
      authorization === undefined ? pending : pending.set('Authorization', authorization);

    const routes: Route[] = [
      {
        name: 'POST /v1/sales/invoices/create',
        call: (authorization, ctx) =>
          withAuth(t.http.post('/v1/sales/invoices/create'), authorization)
            .set('Idempotency-Key', ctx.idempotencyKey)
            .send(anInvoice().withLine().build()),
      },
      {
        name: 'GET /v1/sales/invoices/{id}',
        call: (authorization, ctx) =>
          withAuth(t.http.get(`/v1/sales/invoices/${ctx.invoiceId}`), authorization),
      },
      {
        name: 'GET /v1/sales/invoices',
        call: (authorization) => withAuth(t.http.get('/v1/sales/invoices'), authorization),
      },
      {
        name: 'GET /v1/ledger/entries',
        call: (authorization) => withAuth(t.http.get('/v1/ledger/entries'), authorization),
      },
      {
        name: 'GET /v1/ledger/trial-balance',
        call: (authorization) => withAuth(t.http.get('/v1/ledger/trial-balance'), authorization),
      },
    ];

    const credentials: Array<{ name: string; authorization: (company: TestCompany) => string | undefined }> =
      [
        { name: 'missing Authorization header', authorization: () => undefined },
        {
          name: 'malformed header (valid key, Basic scheme)',
          authorization: (company) => `Basic ${company.apiKey}`,
        },
        { name: 'malformed header (Bearer without a key)', authorization: () => 'Bearer ' },
        {
          name: 'malformed header (key with forbidden characters)',
          authorization: (company) => `Bearer ${company.apiKey}!`,
        },
        { name: 'unknown key', authorization: () => `Bearer lk_${randomBytes(32).toString('base64url')}` },
      ];

    describe.each(routes)('$name', (route) => {
      it.each(credentials)('$name → 401 problem+json, nothing stored', async (credential) => {
        const company = await t.newCompany();
        const existing = await issueInvoice(company);
        const ctx: RouteContext = {
          invoiceId: existing.body.id as string,
          idempotencyKey: newKey('unauthorized'),
        };

        const response = await route.call(credential.authorization(company), ctx);

        expectProblem(response, 401, 'unauthorized');
        expect(JSON.parse(response.text)).not.toHaveProperty('data');
        expect(await count('idempotency_records WHERE idempotency_key = $1', [ctx.idempotencyKey])).toBe(0);
        expect(await count('invoices WHERE company_id = $1', [company.companyId])).toBe(1);
        expect(await count('journal_entries WHERE company_id = $1', [company.companyId])).toBe(1);
      });
    });

    it('a create refused with 401 left no trace: the same Idempotency-Key then executes for the first time', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withLine().build();
      const refused = await t.http
        .post('/v1/sales/invoices/create')
        .set('Authorization', `Basic ${company.apiKey}`)
        .set('Idempotency-Key', key)
        .send(body);
      expectProblem(refused, 401, 'unauthorized');

      const accepted = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(body);

      expect(accepted.status).toBe(201);
      expect(accepted.headers['idempotent-replayed']).toBeUndefined();
      expect(accepted.body.number).toBe('INV-000001');
    });
  });

  it('the same Idempotency-Key in two companies creates two independent invoices, each numbered INV-000001', async () => {
    const companyA = await t.newCompany();
    const companyB = await t.newCompany();
    const key = newKey('shared');
    const body = anInvoice().withOrderId('order-shared-1').withLine().build();

    const a = await t.http
      .post('/v1/sales/invoices/create')
      .set(companyA.auth)
      .set('Idempotency-Key', key)
      .send(body);
    const b = await t.http
      .post('/v1/sales/invoices/create')
      .set(companyB.auth)
      .set('Idempotency-Key', key)
      .send(body);

    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.headers['idempotent-replayed']).toBeUndefined();
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.body.number).toBe('INV-000001');
    expect(b.body.number).toBe('INV-000001');
    expect(b.body.id).not.toBe(a.body.id);

    const { rows: invoices } = await db.query<{ id: string; company_id: string; number: string }>(
      `SELECT id, company_id, number FROM invoices WHERE company_id = ANY($1::uuid[]) ORDER BY number, company_id`,
      [[companyA.companyId, companyB.companyId]],
    );
    expect(invoices).toHaveLength(2);
    expect(invoices).toEqual(
      expect.arrayContaining([
        { id: a.body.id, company_id: companyA.companyId, number: 'INV-000001' },
        { id: b.body.id, company_id: companyB.companyId, number: 'INV-000001' },
      ]),
    );
    const { rows: records } = await db.query<{ company_id: string; response_body: string }>(
      `SELECT company_id, response_body FROM idempotency_records WHERE idempotency_key = $1`,
      [key],
    );
    expect(records).toHaveLength(2);
    expect(records.find((record) => record.company_id === companyA.companyId)?.response_body).toBe(a.text);
    expect(records.find((record) => record.company_id === companyB.companyId)?.response_body).toBe(b.text);
    expect(
      await count('journal_entries WHERE source_id = $1 AND company_id = $2', [
        a.body.id,
        companyA.companyId,
      ]),
    ).toBe(1);
    expect(
      await count('journal_entries WHERE source_id = $1 AND company_id = $2', [
        b.body.id,
        companyB.companyId,
      ]),
    ).toBe(1);
  });

  it("GET of another company's invoice answers 404 not_found, not 403", async () => {
    const owner = await t.newCompany();
    const stranger = await t.newCompany();
    const invoice = await issueInvoice(owner);
    const id = invoice.body.id as string;

    const foreign = await t.http.get(`/v1/sales/invoices/${id}`).set(stranger.auth);
    const unknown = await t.http.get(`/v1/sales/invoices/${randomUUID()}`).set(stranger.auth);
    const own = await t.http.get(`/v1/sales/invoices/${id}`).set(owner.auth);

    expectProblem(foreign, 404, 'not_found');
    expect(foreign.text).not.toContain(invoice.body.number as string);
    expect(foreign.text).not.toContain(owner.companyId);
    expectProblem(unknown, 404, 'not_found');
    expect(own.status).toBe(200);
    expect(own.body.id).toBe(id);
  });

  it("the list and the ledger of company B never show company A's documents", async () => {
    const companyA = await t.newCompany();
    const companyB = await t.newCompany();
    const a1 = await issueInvoice(companyA, anInvoice().withLine({ unitPrice: 70000 }).build());
    await issueInvoice(companyA, anInvoice().withLine({ unitPrice: 90000 }).build());
    const b1 = await issueInvoice(companyB, anInvoice().withLine({ quantity: '1', unitPrice: 1000 }).build());

    const list = await t.http.get('/v1/sales/invoices').set(companyB.auth);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [b1.body], hasMore: false });

    const entries = await t.http.get('/v1/ledger/entries').set(companyB.auth);
    expect(entries.status).toBe(200);
    expect(entries.body.hasMore).toBe(false);
    expect(entries.body.data.map((entry: { sourceId: string }) => entry.sourceId)).toEqual([b1.body.id]);

    const balance = await t.http.get('/v1/ledger/trial-balance').set(companyB.auth);
    expect(balance.status).toBe(200);
    expect(balance.body.totals).toEqual([
      { currency: 'EUR', debitTotal: '1210', creditTotal: '1210', balanced: true },
    ]);
    expect(balance.body.data).toEqual([
      {
        account: 'accounts_receivable',
        currency: 'EUR',
        debitTotal: '1210',
        creditTotal: '0',
        balance: '1210',
      },
      { account: 'revenue', currency: 'EUR', debitTotal: '0', creditTotal: '1000', balance: '-1000' },
      { account: 'vat_payable', currency: 'EUR', debitTotal: '0', creditTotal: '210', balance: '-210' },
    ]);

    const foreignInvoiceCursor = await t.http
      .get(`/v1/sales/invoices?startingAfter=${a1.body.id}`)
      .set(companyB.auth);
    expect(foreignInvoiceCursor.status).toBe(200);
    expect(foreignInvoiceCursor.body).toEqual({ object: 'list', data: [], hasMore: false });

    const entriesOfA = await t.http.get('/v1/ledger/entries').set(companyA.auth);
    expect(entriesOfA.body.data).toHaveLength(2);
    const foreignEntryCursor = await t.http
      .get(`/v1/ledger/entries?startingAfter=${entriesOfA.body.data[0].id}`)
      .set(companyB.auth);
    expect(foreignEntryCursor.status).toBe(200);
    expect(foreignEntryCursor.body).toEqual({ object: 'list', data: [], hasMore: false });
  });
});
