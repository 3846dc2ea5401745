import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

describe('events (outbox)', () => {
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

  it('writes one event per created document, with the document as its GET shows it; replays emit none', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const body = anInvoice().withLine({ quantity: '1', unitPrice: 10000 }).build();
    const invoice = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    const replay = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const credit = await t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ invoiceId: invoice.body.id, reason: 'duplicate' });
    expect(credit.status).toBe(201);
    const purchase = await t.http
      .post('/v1/purchases/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        supplier: { name: 'Tiekėjas', countryCode: 'LT' },
        documentNumber: 'T-1',
        issueDate: '2026-11-30',
        lines: [{ description: 'Paper', quantity: '1', unitPrice: 500, vatRate: '21' }],
      });
    expect(purchase.status).toBe(201);
    const second = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().withLine({ quantity: '1', unitPrice: 2000 }).build());
    const settlement = await t.http
      .post('/v1/settlements/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        payoutId: `po_${key}`,
        currency: 'EUR',
        paidAt: '2026-11-30T10:00:00Z',
        allocations: [{ invoiceId: second.body.id, amount: 2420 }],
      });
    expect(settlement.status).toBe(201);

    const events = await t.http.get('/v1/events?limit=100').set(company.auth);
    expect(events.status).toBe(200);
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual([
      'invoice.created',
      'credit_note.created',
      'purchase_invoice.created',
      'invoice.created',
      'settlement.created',
    ]);
    const [first] = events.body.data;
    expect(first).toEqual({
      id: expect.any(String),
      object: 'event',
      type: 'invoice.created',
      createdAt: invoice.body.createdAt,
      data: { object: JSON.parse(invoice.text) },
    });
    const single = await t.http.get(`/v1/events/${first.id}`).set(company.auth);
    expect(single.body).toEqual(first);

    // Each event enqueued exactly one fan-out job, keyed by the event.
    const { rows } = await db.query(
      `SELECT count(*)::int AS count FROM graphile_worker.jobs
        WHERE task_identifier = 'fan_out_event' AND key = ANY($1)`,
      [events.body.data.map((event: { id: string }) => `fan_out:${event.id}`)],
    );
    expect(rows[0].count).toBe(5);
  });

  it('pages in order with startingAfter and never shows another company', async () => {
    const company = await t.newCompany();
    const other = await t.newCompany();
    for (let i = 0; i < 3; i += 1) {
      const response = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey())
        .send(anInvoice().withLine().build());
      expect(response.status).toBe(201);
    }
    const page1 = await t.http.get('/v1/events?limit=2').set(company.auth);
    const page2 = await t.http
      .get(`/v1/events?limit=2&startingAfter=${page1.body.data[1].id}`)
      .set(company.auth);
    expect(page1.body.hasMore).toBe(true);
    expect(page2.body.hasMore).toBe(false);
    const numbers = [...page1.body.data, ...page2.body.data].map(
      (event: { data: { object: { number: string } } }) => event.data.object.number,
    );
    expect(numbers).toEqual(['INV-000001', 'INV-000002', 'INV-000003']);
    const foreign = await t.http.get('/v1/events').set(other.auth);
    expect(foreign.body.data).toEqual([]);
    const foreignGet = await t.http.get(`/v1/events/${page1.body.data[0].id}`).set(other.auth);
    expect(foreignGet.status).toBe(404);
  });
});
