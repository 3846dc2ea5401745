import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { CapturedLogs } from '../support/captured-logs';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const FAILING_NOTES = 'LOGGING-SPEC-FAIL';

const logs = new CapturedLogs();
let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
  logs.capture();
});

afterAll(async () => {
  jest.restoreAllMocks();
  await db?.end();
});

const logLines = () => logs.lines();
const requestLine = (requestId: string) => logs.requestLine(requestId);

/** The request line is written when the response finishes, which may be just after the client has it. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

// First in this file: nestjs-pino keeps the first application's logger for logs made outside a
// request for the whole process.
describe('at LOG_LEVEL=error (as every test runs)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'error' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('writes nothing for successful and refused requests', async () => {
    const company = await t.newCompany();
    logs.clear();
    expect(
      (
        await t.http
          .post(CREATE)
          .set(company.auth)
          .set('Idempotency-Key', newKey())
          .send(anInvoice().withLine().build())
      ).status,
    ).toBe(201);
    expect((await t.http.post(CREATE).set(company.auth).send(anInvoice().withLine().build())).status).toBe(
      400,
    );
    await settle();
    expect(logs.written).toEqual([]);
  });
});

describe('at LOG_LEVEL=log', () => {
  let t: TestApp;

  beforeAll(async () => {
    await db.query(`
      CREATE OR REPLACE FUNCTION test_fail_invoice_logging() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.notes = '${FAILING_NOTES}' THEN
          RAISE EXCEPTION 'injected failure for the logging spec';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE OR REPLACE TRIGGER test_fail_invoice_logging BEFORE INSERT ON invoices
      FOR EACH ROW EXECUTE FUNCTION test_fail_invoice_logging()`);
    t = await startTestApp({ LOG_LEVEL: 'log' });
  });

  afterAll(async () => {
    await t?.close();
    await db.query('DROP TRIGGER IF EXISTS test_fail_invoice_logging ON invoices');
    await db.query('DROP FUNCTION IF EXISTS test_fail_invoice_logging()');
  });

  beforeEach(() => {
    logs.clear();
  });

  it('writes one JSON line per request: id, company, operation, key, status, duration; no headers, no body', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const customerName = `Customer ${randomUUID()}`;
    const response = await t.http
      .post(CREATE)
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(
        anInvoice()
          .with({ customer: { name: customerName, countryCode: 'LT' } })
          .withLine()
          .build(),
      );
    expect(response.status).toBe(201);
    await settle();

    const line = requestLine(response.headers['x-request-id']);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request completed',
      req: { id: response.headers['x-request-id'], method: 'POST', url: CREATE },
      companyId: company.companyId,
      operation: 'sales.invoices.create',
      idempotencyKey: key,
      res: { statusCode: 201 },
    });
    expect(Object.keys(line.req!).sort()).toEqual(['id', 'method', 'url']);
    expect(line.responseTime).toEqual(expect.any(Number));
    const everything = logs.written.join('');
    expect(everything).not.toContain(company.apiKey);
    expect(everything).not.toContain(customerName);
  });

  it('logs requests the body parser refuses, with the id the problem body names', async () => {
    const company = await t.newCompany();
    const response = await t.http
      .post(CREATE)
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .set('Content-Type', 'application/json')
      .send('{"orderId":');
    expect(response.body.code).toBe('malformed_json');
    expect(response.headers['x-request-id']).toBe(response.body.requestId);
    await settle();

    const line = requestLine(response.body.requestId);
    expect(line).toMatchObject({ level: 'info', res: { statusCode: 400 } });
    expect(line.companyId).toBeUndefined();
  });

  it('uses a sane client-sent X-Request-Id as the id of the request everywhere', async () => {
    const company = await t.newCompany();
    const requestId = `client-${randomUUID()}`;
    const response = await t.http.post(CREATE).set(company.auth).set('X-Request-Id', requestId).send({});
    expect(response.body).toMatchObject({ code: 'idempotency_key_missing', requestId });
    expect(response.headers['x-request-id']).toBe(requestId);
    await settle();

    expect(requestLine(requestId)).toMatchObject({
      companyId: company.companyId,
      operation: 'sales.invoices.create',
      res: { statusCode: 400 },
    });
    expect(requestLine(requestId).idempotencyKey).toBeUndefined();
  });

  it('logs a 5xx once, at error, with its cause and request id; the request line carries no error', async () => {
    const company = await t.newCompany();
    const response = await t.http
      .post(CREATE)
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().with({ notes: FAILING_NOTES }).withLine().build());
    expect(response.status).toBe(500);
    expect(response.text).not.toContain('injected failure');
    await settle();

    const errors = logLines().filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error).toMatchObject({
      context: 'HTTP',
      requestId: response.body.requestId,
      req: { id: response.body.requestId },
      msg: `POST ${CREATE} failed`,
    });
    expect(error.err).toMatchObject({
      type: 'QueryFailedError',
      message: 'injected failure for the logging spec',
    });
    expect(error.err!.stack).toContain('injected failure for the logging spec');
    // Only type, message, stack and code: a database error's parameters would be the body.
    expect(
      Object.keys(error.err!).filter((key) => !['type', 'message', 'stack', 'code'].includes(key)),
    ).toEqual([]);
    expect(JSON.stringify(error)).not.toContain('UAB Pirkėjas');
    expect(JSON.stringify(error)).not.toContain('Consulting');

    const line = requestLine(response.body.requestId);
    expect(line).toMatchObject({ level: 'info', res: { statusCode: 500 } });
    expect(line.err).toBeUndefined();
  });
});
