import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { type InvoiceView, LedgerkeyClient } from '../../libs/sdk/src';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aSettlement } from '../support/settlement.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

interface ListBody<T> {
  object: 'list';
  data: T[];
  hasMore: boolean;
}

describe('lists (cursors, order, filters) and metadata', () => {
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

  async function issue(
    company: TestCompany,
    body: Record<string, unknown>,
    key = newKey(),
  ): Promise<InvoiceView> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(response.status).toBe(201);
    return response.body as InvoiceView;
  }

  async function list<T>(company: TestCompany, path: string): Promise<ListBody<T>> {
    const response = await t.http.get(path).set(company.auth);
    expect(response.status).toBe(200);
    return response.body as ListBody<T>;
  }

  const numbers = (page: ListBody<InvoiceView>) => page.data.map((invoice) => invoice.number);

  describe('every list takes endingBefore and order', () => {
    it('pages invoices newest first, and backwards from a cursor', async () => {
      const company = await t.newCompany();
      const issued: InvoiceView[] = [];
      for (let i = 0; i < 4; i++) issued.push(await issue(company, anInvoice().withLine().build()));

      expect(numbers(await list(company, '/v1/sales/invoices'))).toEqual([
        'INV-000001',
        'INV-000002',
        'INV-000003',
        'INV-000004',
      ]);
      const newest = await list<InvoiceView>(company, '/v1/sales/invoices?order=desc&limit=3');
      expect(numbers(newest)).toEqual(['INV-000004', 'INV-000003', 'INV-000002']);
      expect(newest.hasMore).toBe(true);
      const before = await list<InvoiceView>(
        company,
        `/v1/sales/invoices?endingBefore=${issued[3].id}&limit=2`,
      );
      expect(numbers(before)).toEqual(['INV-000002', 'INV-000003']);
      expect(before.hasMore).toBe(true);
      const newer = await list<InvoiceView>(
        company,
        `/v1/sales/invoices?order=desc&endingBefore=${issued[1].id.toUpperCase()}`,
      );
      expect(numbers(newer)).toEqual(['INV-000004', 'INV-000003']);
      expect(newer.hasMore).toBe(false);
    });

    it('every other list pages desc as the reverse of asc, and backwards from a cursor', async () => {
      const company = await t.newCompany();
      const post = async (path: string, body: Record<string, unknown>) => {
        const response = await t.http
          .post(path)
          .set(company.auth)
          .set('Idempotency-Key', newKey())
          .send(body);
        expect(response.status).toBe(201);
        return response.body as { id: string };
      };
      for (let i = 0; i < 2; i++) {
        const invoice = await issue(company, anInvoice().withLine().build());
        await post('/v1/sales/credit-notes/create', {
          invoiceId: invoice.id,
          reason: 'other',
          lines: [{ description: 'x', quantity: '1', unitPrice: 100, vatRate: '21' }],
        });
        await post('/v1/settlements/create', aSettlement().allocating(invoice.id, 1000).build());
        await post('/v1/purchases/invoices/create', {
          documentNumber: `SUP-${randomUUID()}`,
          issueDate: '2026-11-30',
          supplier: { name: 'UAB Tiekėjas', countryCode: 'LT' },
          lines: [{ description: 'Paper', quantity: '1', unitPrice: 1000, vatRate: '21' }],
        });
        await post('/v1/webhook-endpoints/create', {
          url: `https://example.com/hooks/${i}`,
          enabledEvents: ['*'],
        });
      }
      const endpoint = (await list<{ id: string }>(company, '/v1/webhook-endpoints')).data[0];
      for (const path of [
        '/v1/sales/credit-notes',
        '/v1/settlements',
        '/v1/purchases/invoices',
        '/v1/events',
        '/v1/ledger/entries',
        '/v1/webhook-endpoints',
        `/v1/webhook-endpoints/${endpoint.id}/attempts`,
      ]) {
        const asc = (await list<{ id: string }>(company, `${path}?order=asc&limit=100`)).data.map(
          (item) => item.id,
        );
        const desc = (await list<{ id: string }>(company, `${path}?order=desc&limit=100`)).data.map(
          (item) => item.id,
        );
        expect(desc).toEqual([...asc].reverse());
        if (asc.length < 2) continue; // attempts: none delivered to example.com in a test
        const before = await list<{ id: string }>(company, `${path}?endingBefore=${asc.at(-1)}&limit=1`);
        expect({ path, ids: before.data.map((item) => item.id), hasMore: before.hasMore }).toEqual({
          path,
          ids: [asc.at(-2)],
          hasMore: asc.length > 2,
        });
      }
    });
  });

  describe('invoice filters and derived status', () => {
    it('filters by orderId, customerVatId, issue dates, paymentStatus, creditStatus and metadata', async () => {
      const company = await t.newCompany();
      const orderId = `order-${randomUUID()}`;
      const target = await issue(
        company,
        anInvoice()
          .withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' })
          .with({
            orderId,
            issueDate: '2026-10-05',
            customer: { name: 'UAB Filtras', countryCode: 'LT', vatId: 'LT555000111222' },
            metadata: { crmId: 'deal-42', 'team name': 'Šiaurė' },
          })
          .build(),
      );
      const paidOne = await issue(
        company,
        anInvoice()
          .withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' })
          .with({ issueDate: '2026-11-20' })
          .build(),
      );
      const settle = await t.http
        .post('/v1/settlements/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send(aSettlement().allocating(paidOne.id, 12100).allocating(target.id, 100).build());
      expect(settle.status).toBe(201);

      const ids = async (query: string) =>
        (await list<InvoiceView>(company, `/v1/sales/invoices?${query}`)).data.map((invoice) => invoice.id);
      expect(await ids(`orderId=${orderId}`)).toEqual([target.id]);
      expect(await ids('customerVatId=LT555000111222')).toEqual([target.id]);
      expect(await ids('issueDateFrom=2026-10-01&issueDateTo=2026-10-31')).toEqual([target.id]);
      expect(await ids('issueDateFrom=2026-11-01')).toEqual([paidOne.id]);
      expect(await ids('paymentStatus=partially_paid')).toEqual([target.id]);
      expect(await ids('paymentStatus=paid')).toEqual([paidOne.id]);
      expect(await ids('paymentStatus=unpaid')).toEqual([]);
      expect(await ids('metadata[crmId]=deal-42')).toEqual([target.id]);
      expect(
        await ids(`metadata[team%20name]=${encodeURIComponent('Šiaurė')}&metadata[crmId]=deal-42`),
      ).toEqual([target.id]);
      expect(await ids('metadata[crmId]=deal-43')).toEqual([]);
      expect(await ids(`orderId=${orderId}&paymentStatus=paid`)).toEqual([]);

      const got = (await t.http.get(`/v1/sales/invoices/${target.id}`).set(company.auth)).body as InvoiceView;
      expect(got).toMatchObject({
        outstandingAmount: 12000,
        paymentStatus: 'partially_paid',
        creditStatus: 'none',
        paidTotal: 100,
      });
      expect(got.metadata).toEqual({ 'team name': 'Šiaurė', crmId: 'deal-42' });
      // Keys sorted: the create's answer, GET and the event carry the same bytes.
      expect(Object.keys(got.metadata)).toEqual(['crmId', 'team name']);
      expect(JSON.stringify(got.metadata)).toBe(JSON.stringify(target.metadata));
    });

    it('a fully credited invoice says so and owes nothing', async () => {
      const company = await t.newCompany();
      const invoice = await issue(company, anInvoice().withLine().build());
      const credit = await t.http
        .post('/v1/sales/credit-notes/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send({ invoiceId: invoice.id, reason: 'duplicate' });
      expect(credit.status).toBe(201);
      const got = (await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth))
        .body as InvoiceView;
      expect(got).toMatchObject({ creditStatus: 'credited', outstandingAmount: 0, paymentStatus: 'paid' });
      expect(
        (await list<InvoiceView>(company, '/v1/sales/invoices?creditStatus=credited')).data.map((i) => i.id),
      ).toEqual([invoice.id]);
      expect((await list<InvoiceView>(company, '/v1/sales/invoices?paymentStatus=unpaid')).data).toEqual([]);
    });
  });

  describe('bad list input answers 400 validation_failed with errors[]', () => {
    it.each([
      ['both cursors', `startingAfter=${randomUUID()}&endingBefore=${randomUUID()}`, 'endingBefore'],
      ['a cursor that is no id', 'endingBefore=INV-000001', 'endingBefore'],
      ['an unknown order', 'order=newest', 'order'],
      ['an unknown payment status', 'paymentStatus=overdue', 'paymentStatus'],
      ['an impossible date', 'issueDateFrom=2026-02-30', 'issueDateFrom'],
      ['a reversed date range', 'issueDateFrom=2026-12-01&issueDateTo=2026-11-01', 'issueDateTo'],
      ['a VAT id in lower case', 'customerVatId=lt123', 'customerVatId'],
      ['metadata without a key', 'metadata=x', 'metadata'],
      ['a metadata key twice', 'metadata[a]=1&metadata[a]=2', 'metadata'],
      ['an unknown filter', 'status=paid', 'status'],
      ['an unknown bracketed filter', 'customer[vatId]=LT1', 'customer[vatId]'],
    ])('%s', async (_case, query, field) => {
      const company = await t.newCompany();
      const response = await t.http.get(`/v1/sales/invoices?${query}`).set(company.auth);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
      expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('a metadata key named __proto__ is data, not a prototype', async () => {
      const company = await t.newCompany();
      const response = await t.http.get('/v1/sales/invoices?metadata[__proto__]=x').set(company.auth);
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([]);
    });

    it.each([
      ['/v1/payments', 'status=lost'],
      ['/v1/events', 'type=invoice.deleted'],
      ['/v1/sales/credit-notes', 'invoiceId=nope'],
      ['/v1/purchases/invoices', 'issueDateTo=yesterday'],
      ['/v1/webhook-endpoints', 'order=up'],
    ])('%s?%s', async (path, query) => {
      const company = await t.newCompany();
      const response = await t.http.get(`${path}?${query}`).set(company.auth);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
      expect(response.body.errors.length).toBeGreaterThan(0);
    });
  });

  describe('metadata on created objects', () => {
    it('is stored with each document, returned, immutable in the database, and part of the fingerprint', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice()
        .withLine()
        .with({ metadata: { crmId: 'deal-7' } })
        .build();
      const first = await issue(company, body, key);
      expect(first.metadata).toEqual({ crmId: 'deal-7' });

      const replay = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(body);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const changed = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send({ ...body, metadata: { crmId: 'deal-8' } });
      expect(changed.status).toBe(422);
      expect(changed.body.code).toBe('idempotency_key_reused');

      const { rows } = await db.query(`SELECT metadata FROM invoices WHERE company_id = $1 AND id = $2`, [
        company.companyId,
        first.id,
      ]);
      expect(rows[0].metadata).toEqual({ crmId: 'deal-7' });
      await expect(
        db.query(`UPDATE invoices SET metadata = '{"crmId":"other"}' WHERE id = $1`, [first.id]),
      ).rejects.toThrow(/immutable/);

      const event = await list<{ type: string; data: { object: { id: string; metadata: unknown } } }>(
        company,
        '/v1/events?type=invoice.created',
      );
      expect(event.data.find((item) => item.data.object.id === first.id)?.data.object.metadata).toEqual({
        crmId: 'deal-7',
      });
    });

    it('no metadata and {} are one request under one key, and both answer {}', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withLine().build();
      const first = await issue(company, body, key);
      expect(first.metadata).toEqual({});
      const again = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send({ ...body, metadata: {} });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('every create route takes, stores and returns it', async () => {
      const company = await t.newCompany();
      const invoice = await issue(company, anInvoice().withLine().build());
      const post = (path: string, body: Record<string, unknown>) =>
        t.http
          .post(path)
          .set(company.auth)
          .set('Idempotency-Key', newKey())
          .send({ ...body, metadata: { ref: path } });
      const creditNote = await post('/v1/sales/credit-notes/create', {
        invoiceId: invoice.id,
        reason: 'other',
        lines: [{ description: 'x', quantity: '1', unitPrice: 100, vatRate: '21' }],
      });
      const settlement = await post(
        '/v1/settlements/create',
        aSettlement().allocating(invoice.id, 1000).build(),
      );
      const purchase = await post('/v1/purchases/invoices/create', {
        documentNumber: `SUP-${randomUUID()}`,
        issueDate: '2026-11-30',
        supplier: { name: 'UAB Tiekėjas', countryCode: 'LT' },
        lines: [{ description: 'Paper', quantity: '1', unitPrice: 1000, vatRate: '21' }],
      });
      const endpoint = await post('/v1/webhook-endpoints/create', {
        url: 'https://example.com/hooks',
        enabledEvents: ['*'],
      });
      for (const [response, path, table] of [
        [creditNote, '/v1/sales/credit-notes/create', 'credit_notes'],
        [settlement, '/v1/settlements/create', 'settlements'],
        [purchase, '/v1/purchases/invoices/create', 'purchase_invoices'],
        [endpoint, '/v1/webhook-endpoints/create', 'webhook_endpoints'],
      ] as const) {
        expect(response.status).toBe(201);
        expect(response.body.metadata).toEqual({ ref: path });
        const { rows } = await db.query(`SELECT metadata FROM ${table} WHERE id = $1`, [response.body.id]);
        expect(rows[0].metadata).toEqual({ ref: path });
      }
      const listed = await list<{ id: string; metadata: unknown }>(company, '/v1/webhook-endpoints');
      expect(listed.data[0].metadata).toEqual({ ref: '/v1/webhook-endpoints/create' });
    });

    it.each([
      ['an array', ['a']],
      ['a number value', { a: 1 }],
      ['a null value', { a: null }],
      ['an empty key', { '': 'x' }],
      ['a key with brackets', { 'a[b]': 'x' }],
      ['a key of 41 characters', { ['k'.repeat(41)]: 'x' }],
      ['a value of 501 characters', { a: 'v'.repeat(501) }],
      ['21 keys', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))],
    ])(
      'refuses %s with 400 validation_failed on metadata, storing nothing under the key',
      async (_case, metadata) => {
        const company = await t.newCompany();
        const key = newKey();
        const body = anInvoice().withLine().build();
        const response = await t.http
          .post('/v1/sales/invoices/create')
          .set(company.auth)
          .set('Idempotency-Key', key)
          .send({ ...body, metadata });
        expect(response.status).toBe(400);
        expect(response.body.code).toBe('validation_failed');
        expect(response.body.errors).toEqual([expect.objectContaining({ field: 'metadata' })]);
        // Nothing stored: the same key with a valid body executes.
        expect((await issue(company, body, key)).number).toBe('INV-000001');
      },
    );

    it('accepts the bounds exactly: 20 keys of 40 characters, values of 500 (code points)', async () => {
      const company = await t.newCompany();
      const metadata = Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [`${i}`.padStart(39, 'ž') + '😀', '😀'.repeat(500)]),
      );
      const invoice = await issue(company, anInvoice().withLine().with({ metadata }).build());
      expect(Object.keys(invoice.metadata)).toHaveLength(20);
    });
  });

  describe('SDK', () => {
    it('iterates every matching invoice across pages with for await, filters typed', async () => {
      const company = await t.newCompany();
      for (let i = 0; i < 7; i++) {
        await issue(
          company,
          anInvoice()
            .withLine()
            .with({ metadata: { batch: i % 2 === 0 ? 'even' : 'odd' } })
            .build(),
        );
      }
      const client = new LedgerkeyClient({ baseUrl: t.baseUrl, apiKey: company.apiKey });
      const seen: string[] = [];
      for await (const invoice of client.salesInvoices.listAll({
        limit: 2,
        order: 'desc',
        metadata: { batch: 'even' },
      })) {
        seen.push(invoice.number);
      }
      expect(seen).toEqual(['INV-000007', 'INV-000005', 'INV-000003', 'INV-000001']);

      const unpaid: string[] = [];
      for await (const invoice of client.salesInvoices.listAll({ limit: 3, paymentStatus: 'unpaid' }))
        unpaid.push(invoice.number);
      expect(unpaid).toHaveLength(7);

      const page = await client.salesInvoices.list({
        limit: 2,
        endingBefore: (await client.salesInvoices.list({ order: 'desc', limit: 1 })).data[0].id,
      });
      expect(page.data.map((invoice) => invoice.number)).toEqual(['INV-000005', 'INV-000006']);
    });
  });
});
