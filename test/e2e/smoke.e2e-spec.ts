import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates and replays an invoice', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const body = anInvoice().withLine().build();
    const first = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(first.status).toBe(201);
    const second = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
  });
});
