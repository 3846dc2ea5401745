import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';
import { eventually } from '../support/provider-sandbox';
import {
  DELIVERY_TIMEOUT_MS,
  deliveryCalls,
  registerEndpoint,
  startDeliveryApp,
} from '../support/webhook-endpoints';
import { WebhookReceiver } from '../support/webhook-receiver';

describe('webhook delivery (worker in the API process)', () => {
  let t: TestApp;
  let db: Pool;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startDeliveryApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await t.close();
    await db.end();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  const { receiver, issueInvoice, eventOf } = deliveryCalls(() => ({ t, receivers }));

  /**
   * An endpoint's attempts once at least `count` are recorded: a receiver answers before the
   * worker records that attempt, so what the receiver saw is not yet in the list.
   */
  const recordedAttempts = (company: { auth: Record<string, string> }, endpointId: string, count: number) =>
    eventually(async () => {
      const answer = await t.http.get(`/v1/webhook-endpoints/${endpointId}/attempts`).set(company.auth);
      return answer.status !== 200 || (answer.body.data as unknown[]).length >= count ? answer : undefined;
    }, DELIVERY_TIMEOUT_MS);

  it('delivers a signed invoice.created; after two failures the retry succeeds with the same webhook-id', async () => {
    const company = await t.newCompany();
    const target = await receiver({ failFirst: 2 });
    const endpoint = await registerEndpoint(t, company, {
      url: target.url(),
      enabledEvents: ['invoice.created'],
    });
    expect(endpoint.status).toBe(201);
    const invoice = await issueInvoice(company);
    const event = await eventOf(company, invoice.id);

    await target.waitFor((requests) => requests.some((r) => r.answer === 200), DELIVERY_TIMEOUT_MS);
    const requests = target.requestsFor(event.id);
    expect(requests.map((request) => request.answer)).toEqual([500, 500, 200]);
    const verifier = new Webhook(endpoint.body.secret as string);
    for (const request of requests) {
      // Signed per Standard Webhooks; the body is the event exactly as GET /v1/events/{id} shows it.
      expect(request.body).toBe(event.text);
      expect(request.headers['webhook-id']).toBe(event.id);
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifier.verify(request.body, request.headers)).toEqual(JSON.parse(event.text));
    }
    // Retries follow the 1 s schedule (±20 % jitter), not graphile-worker's own backoff.
    const gaps = requests.slice(1).map((request, index) => +request.receivedAt - +requests[index].receivedAt);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(750);

    const attempts = await recordedAttempts(company, endpoint.body.id, 3);
    expect(attempts.status).toBe(200);
    expect(attempts.body.hasMore).toBe(false);
    expect(
      attempts.body.data.map((attempt: Record<string, unknown>) => ({
        eventId: attempt.eventId,
        attemptNumber: attempt.attemptNumber,
        result: attempt.result,
        statusCode: attempt.statusCode,
        error: attempt.error,
      })),
    ).toEqual([
      {
        eventId: event.id,
        attemptNumber: 1,
        result: 'failed',
        statusCode: 500,
        error: 'endpoint answered HTTP 500',
      },
      {
        eventId: event.id,
        attemptNumber: 2,
        result: 'failed',
        statusCode: 500,
        error: 'endpoint answered HTTP 500',
      },
      { eventId: event.id, attemptNumber: 3, result: 'succeeded', statusCode: 200, error: null },
    ]);
    for (const attempt of attempts.body.data) {
      expect(attempt).toMatchObject({
        object: 'webhook_attempt',
        endpointId: endpoint.body.id,
        durationMs: expect.any(Number),
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      });
    }
    const page = await t.http
      .get(
        `/v1/webhook-endpoints/${endpoint.body.id}/attempts?limit=2&startingAfter=${attempts.body.data[0].id}`,
      )
      .set(company.auth);
    expect(page.body.data.map((attempt: { id: string }) => attempt.id)).toEqual(
      attempts.body.data.slice(1).map((attempt: { id: string }) => attempt.id),
    );

    const { rows } = await db.query(
      `SELECT status, attempt_count, leased_until, finished_at IS NOT NULL AS finished
         FROM webhook_deliveries WHERE company_id = $1`,
      [company.companyId],
    );
    expect(rows).toEqual([{ status: 'delivered', attempt_count: 3, leased_until: null, finished: true }]);
  });

  it('marks a delivery failed after the last scheduled retry', async () => {
    const company = await t.newCompany();
    const target = await receiver({ failFirst: 100 });
    const endpoint = await registerEndpoint(t, company, { url: target.url(), enabledEvents: ['*'] });
    await issueInvoice(company);
    await target.waitFor((requests) => requests.length >= 4, DELIVERY_TIMEOUT_MS);
    const deadline = Date.now() + 5000;
    let status = 'pending';
    while (status === 'pending' && Date.now() < deadline) {
      const { rows } = await db.query(`SELECT status FROM webhook_deliveries WHERE company_id = $1`, [
        company.companyId,
      ]);
      status = rows[0].status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe('failed');
    // Schedule '1,1,1': four attempts, then no more.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(target.requests).toHaveLength(4);
    const attempts = await t.http.get(`/v1/webhook-endpoints/${endpoint.body.id}/attempts`).set(company.auth);
    expect(attempts.body.data.map((attempt: { attemptNumber: number }) => attempt.attemptNumber)).toEqual([
      1, 2, 3, 4,
    ]);
  });

  it('runs jobs queued before their payload named the company: { eventId } fan-out, { deliveryId } delivery', async () => {
    const company = await t.newCompany();
    const target = await receiver();
    const endpoint = await registerEndpoint(t, company, { url: target.url(), enabledEvents: ['*'] });
    const [fannedOut, delivered, deliveryId] = [randomUUID(), randomUUID(), randomUUID()];
    const client = await db.connect();
    try {
      // As the previous version wrote them: events, a delivery, and jobs naming only an id.
      await client.query('BEGIN');
      for (const eventId of [fannedOut, delivered]) {
        await client.query(
          `WITH next AS (
             INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
             ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position
           )
           INSERT INTO events (id, company_id, position, type, data, created_at)
           SELECT $1, $2, next.last_position, 'invoice.created', '{"object":{}}', now() FROM next`,
          [eventId, company.companyId],
        );
      }
      await client.query(
        `SELECT graphile_worker.add_job('fan_out_event', json_build_object('eventId', $1::uuid),
                                        job_key := 'fan_out:' || $1)`,
        [fannedOut],
      );
      await client.query(
        `INSERT INTO webhook_deliveries (id, company_id, event_id, endpoint_id) VALUES ($1, $2, $3, $4)`,
        [deliveryId, company.companyId, delivered, endpoint.body.id],
      );
      await client.query(
        `SELECT graphile_worker.add_job('deliver_webhook', json_build_object('deliveryId', $1::uuid),
                                        job_key := 'deliver:' || $1)`,
        [deliveryId],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }

    await target.waitFor(
      () => target.requestsFor(fannedOut).length > 0 && target.requestsFor(delivered).length > 0,
      DELIVERY_TIMEOUT_MS,
    );
    // The attempt is recorded just after the receiver answered.
    const statuses = async () =>
      (
        await db.query(
          `SELECT event_id, status FROM webhook_deliveries WHERE company_id = $1 ORDER BY event_id = $2`,
          [company.companyId, delivered],
        )
      ).rows;
    const deadline = Date.now() + 5000;
    let rows = await statuses();
    while (rows.some((row) => row.status === 'pending') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = await statuses();
    }
    expect(rows).toEqual([
      { event_id: fannedOut, status: 'delivered' },
      { event_id: delivered, status: 'delivered' },
    ]);
  });

  it('delivers only subscribed types, to enabled endpoints, and records timeouts and refused connections', async () => {
    const company = await t.newCompany();
    const invoicesOnly = await receiver();
    const creditNotesOnly = await receiver();
    const disabledTarget = await receiver();
    const a = await registerEndpoint(t, company, {
      url: invoicesOnly.url(),
      enabledEvents: ['invoice.created'],
    });
    await registerEndpoint(t, company, {
      url: creditNotesOnly.url(),
      enabledEvents: ['credit_note.created'],
    });
    const disabled = await registerEndpoint(t, company, { url: disabledTarget.url(), enabledEvents: ['*'] });
    const disable = await t.http.post(`/v1/webhook-endpoints/${disabled.body.id}/disable`).set(company.auth);
    expect(disable.status).toBe(200);
    expect(disable.body).toMatchObject({ status: 'disabled', disabledAt: expect.any(String) });
    const again = await t.http.post(`/v1/webhook-endpoints/${disabled.body.id}/disable`).set(company.auth);
    expect(again.body).toEqual(disable.body);

    await issueInvoice(company);
    await invoicesOnly.waitFor((requests) => requests.length === 1, DELIVERY_TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(creditNotesOnly.requests).toEqual([]);
    expect(disabledTarget.requests).toEqual([]);
    const attempts = await recordedAttempts(company, a.body.id, 1);
    expect(attempts.body.data).toHaveLength(1);

    // Nothing listens on a closed receiver's port: the attempt records the connection error.
    const closed = await WebhookReceiver.start();
    const closedUrl = closed.url();
    await closed.close();
    const refused = await registerEndpoint(t, company, {
      url: closedUrl,
      enabledEvents: ['invoice.created'],
    });
    const hanging = await receiver({ hangFirst: 1 });
    const slow = await registerEndpoint(t, company, {
      url: hanging.url(),
      enabledEvents: ['invoice.created'],
    });
    await issueInvoice(company);
    await hanging.waitFor((requests) => requests.some((r) => r.answer === 200), DELIVERY_TIMEOUT_MS);
    const slowAttempts = await recordedAttempts(company, slow.body.id, 2);
    expect(slowAttempts.body.data[0]).toMatchObject({
      result: 'failed',
      statusCode: null,
      error: 'timed out after 2000 ms',
    });
    expect(slowAttempts.body.data[0].durationMs).toBeGreaterThanOrEqual(1900);
    expect(slowAttempts.body.data[1]).toMatchObject({ result: 'succeeded', statusCode: 200 });
    const refusedAttempts = await recordedAttempts(company, refused.body.id, 1);
    expect(refusedAttempts.body.data[0]).toMatchObject({
      result: 'failed',
      statusCode: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });
  }, 40_000);

  it('does not follow redirects', async () => {
    const company = await t.newCompany();
    const redirecting = await receiver();
    // A receiver that always redirects: 3xx is a failed attempt, the Location is never requested.
    const { createServer } = await import('node:http');
    const hits: string[] = [];
    const server = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.writeHead(302, { Location: redirecting.url('/redirected') }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const endpoint = await registerEndpoint(t, company, {
        url: `http://127.0.0.1:${port}/hook`,
        enabledEvents: ['invoice.created'],
      });
      await issueInvoice(company);
      const attempts = (await recordedAttempts(company, endpoint.body.id, 1)).body.data;
      expect(attempts[0]).toMatchObject({ statusCode: 302, result: 'failed' });
      expect(redirecting.requests).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
