import { randomUUID } from 'node:crypto';
import { countDeliveryAttempts, readDeliveryBacklog } from '@ledgerkey/webhooks';
import type { Pool, PoolClient } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { parsePrometheusText, sampleValue, type PrometheusSample } from '../support/prometheus';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const OPERATION = 'sales.invoices.create';
const OUTCOMES = [
  'executed',
  'replayed',
  'payload_mismatch',
  'in_flight',
  'missing_key',
  'invalid_key',
  'business_rejection',
] as const;
type Outcome = (typeof OUTCOMES)[number];
const DURATION = 'ledgerkey_http_request_duration_seconds';

let t: TestApp;
let db: Pool;

beforeAll(async () => {
  t = await startTestApp();
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function scrape(): Promise<PrometheusSample[]> {
  const response = await t.http.get('/metrics');
  expect(response.status).toBe(200);
  // Prometheus text format 0.0.4 (parameter order is Express's).
  expect(response.headers['content-type']).toMatch(/^text\/plain;/);
  expect(response.headers['content-type']).toContain('version=0.0.4');
  return parsePrometheusText(response.text);
}

function outcomeCounts(samples: PrometheusSample[]): Record<Outcome, number> {
  return Object.fromEntries(
    OUTCOMES.map((outcome) => [
      outcome,
      sampleValue(samples, 'ledgerkey_idempotency_requests_total', { operation: OPERATION, outcome }) ?? 0,
    ]),
  ) as Record<Outcome, number>;
}

function create(company: TestCompany, key: string | undefined, body: object) {
  const request = t.http.post(CREATE).set(company.auth);
  if (key !== undefined) request.set('Idempotency-Key', key);
  return request.send(body);
}

/** Holds the interceptor's per-key advisory lock (IdempotencyRecordRepository.claim) while `during` runs. */
async function whileKeyIsHeld(company: TestCompany, key: string, during: () => Promise<void>): Promise<void> {
  const holder = await db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `${company.companyId}\n${OPERATION}\n${key}`,
    ]);
    await during();
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

describe('GET /metrics', () => {
  it('answers Prometheus text without authentication, with the default process metrics', async () => {
    const response = await t.http.get('/metrics');
    expect(response.status).toBe(200);
    expect(response.text).toContain('# TYPE ledgerkey_idempotency_requests_total counter');
    expect(response.text).toContain(`# TYPE ${DURATION} histogram`);
    const samples = parsePrometheusText(response.text);
    expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts each idempotency outcome once per request, by operation; validation failures are not outcomes', async () => {
    const company = await t.newCompany();
    const before = outcomeCounts(await scrape());

    const key = newKey();
    const orderId = `order-${randomUUID()}`;
    const body = anInvoice().withOrderId(orderId).withLine().build();
    expect((await create(company, key, body)).status).toBe(201);

    const replay = await create(company, key, body);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    const mismatch = await create(company, key, anInvoice().withOrderId().withLine().build());
    expect({ status: mismatch.status, code: mismatch.body.code }).toEqual({
      status: 422,
      code: 'idempotency_key_reused',
    });

    const busyKey = newKey();
    await whileKeyIsHeld(company, busyKey, async () => {
      const busy = await create(company, busyKey, anInvoice().withLine().build());
      expect({ status: busy.status, code: busy.body.code }).toEqual({
        status: 409,
        code: 'idempotency_key_in_use',
      });
    });

    const missing = await create(company, undefined, anInvoice().withLine().build());
    expect(missing.body.code).toBe('idempotency_key_missing');
    const invalid = await create(company, 'not a key', anInvoice().withLine().build());
    expect(invalid.body.code).toBe('idempotency_key_invalid');

    const duplicateOrder = await create(
      company,
      newKey(),
      anInvoice().withOrderId(orderId).withLine().build(),
    );
    expect({ status: duplicateOrder.status, code: duplicateOrder.body.code }).toEqual({
      status: 409,
      code: 'order_already_invoiced',
    });

    const badBody = await create(company, newKey(), anInvoice().withLine({ quantity: '-1' }).build());
    expect(badBody.body.code).toBe('validation_failed');

    const after = outcomeCounts(await scrape());
    const delta = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, after[outcome] - before[outcome]]));
    expect(delta).toEqual({
      executed: 1,
      replayed: 1,
      payload_mismatch: 1,
      in_flight: 1,
      missing_key: 1,
      invalid_key: 1,
      business_rejection: 1,
    });
  });

  it('labels nothing by company', async () => {
    const company = await t.newCompany();
    expect((await create(company, newKey(), anInvoice().withLine().build())).status).toBe(201);
    const response = await t.http.get('/metrics');
    expect(response.text).not.toContain(company.companyId);
    const labelNames = new Set(
      parsePrometheusText(response.text).flatMap((sample) => Object.keys(sample.labels)),
    );
    expect([...labelNames].filter((name) => /company|tenant/i.test(name))).toEqual([]);
  });

  it('times requests by method, route template and status class, including bodies refused before routing', async () => {
    const company = await t.newCompany();
    const created = await create(company, newKey(), anInvoice().withLine().build());
    expect(created.status).toBe(201);
    const count = (samples: PrometheusSample[], labels: Record<string, string>) =>
      sampleValue(samples, `${DURATION}_count`, labels) ?? 0;
    const byId = { method: 'GET', route: '/v1/sales/invoices/:id', status_class: '2xx' };
    const unmatched404 = { method: 'GET', route: 'unmatched', status_class: '4xx' };
    const refusedBody = { method: 'POST', route: 'unmatched', status_class: '4xx' };
    const before = await scrape();

    expect((await t.http.get(`/v1/sales/invoices/${created.body.id}`).set(company.auth)).status).toBe(200);
    expect((await t.http.get(`/no-such-route/${randomUUID()}`)).status).toBe(404);
    const malformed = await t.http
      .post(CREATE)
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .set('Content-Type', 'application/json')
      .send('{"orderId":');
    expect(malformed.body.code).toBe('malformed_json');

    const after = await scrape();
    expect(count(after, byId) - count(before, byId)).toBe(1);
    expect(count(after, unmatched404) - count(before, unmatched404)).toBe(1);
    expect(count(after, refusedBody) - count(before, refusedBody)).toBe(1);
    expect(sampleValue(after, `${DURATION}_sum`, byId)).toBeGreaterThan(0);
    expect(sampleValue(after, `${DURATION}_bucket`, { ...byId, le: '+Inf' })).toBe(count(after, byId));
    const routes = new Set(
      after.filter((sample) => sample.name === `${DURATION}_count`).map((s) => s.labels.route),
    );
    expect([...routes].filter((route) => /[0-9a-f]{8}-[0-9a-f]{4}/.test(route))).toEqual([]);
  });

  it('reports the event backlog, the oldest undelivered event age and delivery attempts by result', async () => {
    const samples = await scrape();
    expect(sampleValue(samples, 'ledgerkey_outbox_undelivered_events')).toBeGreaterThanOrEqual(0);
    expect(
      sampleValue(samples, 'ledgerkey_outbox_oldest_undelivered_event_age_seconds'),
    ).toBeGreaterThanOrEqual(0);
    for (const result of ['succeeded', 'failed', 'abandoned']) {
      expect(
        sampleValue(samples, 'ledgerkey_webhook_delivery_attempts_total', { result }),
      ).toBeGreaterThanOrEqual(0);
    }
  });
});

/**
 * The queries behind the delivery metrics, inside one REPEATABLE READ transaction that is rolled
 * back: its snapshot makes the before/after difference exactly what the test wrote, whatever
 * other test files (or a worker) do to the shared queue meanwhile.
 */
describe('delivery statistics', () => {
  let client: PoolClient;
  let companyId: string;

  beforeEach(async () => {
    companyId = (await t.newCompany()).companyId;
    client = await db.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  });

  afterEach(async () => {
    await client.query('ROLLBACK');
    client.release();
  });

  async function anEvent(ageSeconds: number): Promise<string> {
    const id = randomUUID();
    await client.query(
      `WITH next AS (
         INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
         ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position
       )
       INSERT INTO events (id, company_id, position, type, data, created_at)
       SELECT $1, $2, next.last_position, 'invoice.created', '{"object":{}}', now() - make_interval(secs => $3)
         FROM next`,
      [id, companyId, ageSeconds],
    );
    return id;
  }

  async function aDelivery(eventId: string, status: 'pending' | 'delivered' | 'failed'): Promise<string> {
    const endpointId = randomUUID();
    const deliveryId = randomUUID();
    await client.query(
      `INSERT INTO webhook_endpoints (id, company_id, url, enabled_events, secret)
       VALUES ($1, $2, 'https://example.com/hook', '{*}', 'whsec_' || repeat('A', 32))`,
      [endpointId, companyId],
    );
    await client.query(
      `INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id, status, finished_at)
       VALUES ($1, $2, $3, $4, $5::text, CASE WHEN $5::text = 'pending' THEN NULL ELSE now() END)`,
      [deliveryId, companyId, eventId, endpointId, status],
    );
    return deliveryId;
  }

  it('counts an event as undelivered while a delivery of it is pending', async () => {
    const before = await readDeliveryBacklog(client);

    await aDelivery(await anEvent(7200), 'pending');
    await aDelivery(await anEvent(60), 'pending');
    const twoPending = await anEvent(30);
    await aDelivery(twoPending, 'pending');
    await aDelivery(twoPending, 'pending');
    const onePending = await anEvent(40);
    await aDelivery(onePending, 'pending');
    await aDelivery(onePending, 'delivered');
    await aDelivery(await anEvent(10_000), 'delivered');
    await aDelivery(await anEvent(20_000), 'failed');
    await anEvent(30_000);

    const after = await readDeliveryBacklog(client);
    expect(after.events - before.events).toBe(4);
    expect(after.oldestAgeSeconds).toBeGreaterThanOrEqual(7200);
    expect(after.oldestAgeSeconds).toBeLessThan(Math.max(before.oldestAgeSeconds, 7200) + 60);
  });

  it('counts delivery attempts by result', async () => {
    const before = await countDeliveryAttempts(client);
    const eventId = await anEvent(0);
    const deliveryId = await aDelivery(eventId, 'pending');
    const { rows } = await client.query<{ endpoint_id: string }>(
      'SELECT endpoint_id FROM webhook_deliveries WHERE id = $1',
      [deliveryId],
    );
    for (const [number, result, statusCode] of [
      [1, 'failed', 503],
      [2, 'abandoned', null],
      [3, 'succeeded', 200],
      [4, 'failed', null],
    ] as const) {
      await client.query(
        `INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, attempt_number,
                                       result, status_code, started_at, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), now())`,
        [randomUUID(), companyId, deliveryId, rows[0].endpoint_id, eventId, number, result, statusCode],
      );
    }
    const after = await countDeliveryAttempts(client);
    expect({
      succeeded: after.succeeded - before.succeeded,
      failed: after.failed - before.failed,
      abandoned: after.abandoned - before.abandoned,
    }).toEqual({ succeeded: 1, failed: 2, abandoned: 1 });
  });
});
