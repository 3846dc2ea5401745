import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { JobRunner } from '@ledgerkey/jobs';
import { anInvoice, newKey } from '../support/invoice.builder';
import { columnsContaining } from '../support/stored-text-scan';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool, testDatabaseUrl } from '../support/test-database';
import { testSecretBox } from '../support/test-secrets';
import { WebhookReceiver, type WebhookReceiverBehaviour } from '../support/webhook-receiver';

const CREATE_ENDPOINT = '/v1/webhook-endpoints/create';

/** Every 8-character piece of the secret's random part: none may appear where it is stored. */
function piecesOf(secret: string): string[] {
  const random = secret.slice('whsec_'.length);
  return Array.from({ length: random.length - 7 }, (_, index) => random.slice(index, index + 8));
}
const DELIVERY_TIMEOUT_MS = 20_000;

interface EndpointBody {
  id: string;
  url: string;
  secret?: string;
  status: string;
}

async function registerEndpoint(
  t: TestApp,
  company: TestCompany,
  body: Record<string, unknown>,
  key = newKey('endpoint'),
): Promise<{
  status: number;
  body: EndpointBody & Record<string, unknown>;
  headers: Record<string, string>;
}> {
  const response = await t.http
    .post(CREATE_ENDPOINT)
    .set(company.auth)
    .set('Idempotency-Key', key)
    .send(body);
  return {
    status: response.status,
    body: response.body,
    headers: response.headers as Record<string, string>,
  };
}

describe('webhook endpoints without WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:8080/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://2130706433/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/hook',
    'http://100.64.0.1/hook',
    'https://0.0.0.0/hook',
  ])('refuses %s at registration with 422 webhook_url_forbidden on the url field', async (url) => {
    const company = await t.newCompany();
    const key = newKey('endpoint');
    const response = await registerEndpoint(t, company, { url, enabledEvents: ['*'] }, key);
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      code: 'webhook_url_forbidden',
      errors: [{ field: 'url', message: expect.any(String) }],
    });
    // A business rejection: stored under the key and replayed.
    const replay = await registerEndpoint(t, company, { url, enabledEvents: ['*'] }, key);
    expect(replay.status).toBe(422);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const list = await t.http.get('/v1/webhook-endpoints').set(company.auth);
    expect(list.body.data).toEqual([]);
  });

  it('rejects malformed bodies with 400 validation_failed and stores nothing', async () => {
    const company = await t.newCompany();
    for (const body of [
      { url: 'ftp://example.com/hook', enabledEvents: ['*'] },
      { url: 'https://user:pw@example.com/hook', enabledEvents: ['*'] },
      { url: 'not a url', enabledEvents: ['*'] },
      { url: 'https://example.com/hook', enabledEvents: [] },
      { url: 'https://example.com/hook', enabledEvents: ['invoice.deleted'] },
      { url: 'https://example.com/hook', enabledEvents: ['invoice.created', 'invoice.created'] },
      { url: 'https://example.com/hook' },
      { url: 'https://example.com/hook', enabledEvents: ['*'], secret: 'whsec_mine' },
    ]) {
      const response = await registerEndpoint(t, company, body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({
        body,
        status: 400,
        code: 'validation_failed',
      });
    }
  });
});

/** A URL of `length` characters once normalized: `é` percent-encodes to six ("%C3%A9"). */
function urlNormalizingTo(base: string, length: number): { sent: string; stored: string } {
  const accents = Math.floor((length - base.length) / 6);
  const sent = base + 'é'.repeat(accents) + 'a'.repeat(length - base.length - 6 * accents);
  return { sent, stored: new URL(sent).href };
}

describe('webhook endpoints: the URL is validated as it is stored', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    // Private targets allowed: no DNS at registration, so only the URL's form is judged.
    t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    db = testDatabasePool();
  });
  afterAll(async () => {
    await t.close();
    await db.end();
  });

  async function storedUrls(company: TestCompany): Promise<string[]> {
    const { rows } = await db.query<{ url: string }>(
      `SELECT url FROM webhook_endpoints WHERE company_id = $1`,
      [company.companyId],
    );
    return rows.map((row) => row.url);
  }

  it('1,019 characters that percent-encode past 2048 → 400 validation_failed on url, nothing stored', async () => {
    const company = await t.newCompany();
    const url = 'https://example.com/' + 'é'.repeat(999);
    expect(url.length).toBe(1019);
    const response = await registerEndpoint(t, company, { url, enabledEvents: ['*'] });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'url', message: expect.stringContaining('once normalized') }],
    });
    expect(await storedUrls(company)).toEqual([]);
  });

  it('normalized to exactly 2048 characters → 201, stored and shown normalized; 2049 → 400', async () => {
    const company = await t.newCompany();
    const atBound = urlNormalizingTo('http://127.0.0.1:9/hooks/', 2048);
    expect(atBound.stored).toHaveLength(2048);
    const created = await registerEndpoint(t, company, { url: atBound.sent, enabledEvents: ['*'] });
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(atBound.stored);
    expect(await storedUrls(company)).toEqual([atBound.stored]);

    const over = urlNormalizingTo('http://127.0.0.1:9/hooks/', 2049);
    const rejected = await registerEndpoint(t, company, { url: over.sent, enabledEvents: ['*'] });
    expect(rejected.status).toBe(400);
    expect(rejected.body.errors).toEqual([
      { field: 'url', message: expect.stringContaining('becomes 2049') },
    ]);
    expect(await storedUrls(company)).toEqual([atBound.stored]);
  });

  it('the sent form is bounded too: 2049 code points that would normalize shorter → 400', async () => {
    const company = await t.newCompany();
    // Tabs and newlines are removed by URL parsing: short once stored, but longer than documented.
    const url = 'http://127.0.0.1:9/' + '\t'.repeat(2049 - 'http://127.0.0.1:9/'.length);
    expect(new URL(url).href.length).toBeLessThan(2048);
    const response = await registerEndpoint(t, company, { url, enabledEvents: ['*'] });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'url', message: expect.stringContaining('2048') }]);
  });
});

describe('webhook delivery (worker in the API process)', () => {
  let t: TestApp;
  let db: Pool;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_SECONDS: '5',
      WEBHOOK_SWEEP_INTERVAL_MS: '500',
    });
    await t.app.get(JobRunner).start({ connectionString: testDatabaseUrl(), concurrency: 4 });
    db = testDatabasePool();
  });
  afterAll(async () => {
    await t.close();
    await db.end();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(behaviour: WebhookReceiverBehaviour = {}): Promise<WebhookReceiver> {
    const started = await WebhookReceiver.start(behaviour);
    receivers.push(started);
    return started;
  }

  async function issueInvoice(
    company: TestCompany,
    key = newKey('invoice'),
  ): Promise<{ id: string; text: string }> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(anInvoice().withLine().build());
    expect(response.status).toBe(201);
    return { id: response.body.id, text: response.text };
  }

  async function eventOf(company: TestCompany, invoiceId: string): Promise<{ id: string; text: string }> {
    // The list holds an event back while an older transaction (e.g. the worker's) still runs.
    const deadline = Date.now() + 5000;
    let event: { id: string } | undefined;
    while (!event && Date.now() < deadline) {
      const events = await t.http.get('/v1/events?limit=100').set(company.auth);
      event = (events.body.data as Array<{ id: string; data: { object: { id: string } } }>).find(
        (candidate) => candidate.data.object.id === invoiceId,
      );
      if (!event) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!event) throw new Error(`no event for invoice ${invoiceId}`);
    const single = await t.http.get(`/v1/events/${event.id}`).set(company.auth);
    return { id: event.id, text: single.text };
  }

  it('registers an endpoint: 201 with a whsec_ secret shown only on create (and its replay), stored sealed', async () => {
    const company = await t.newCompany();
    const target = await receiver();
    const key = newKey('endpoint');
    const created = await registerEndpoint(
      t,
      company,
      { url: target.url(), enabledEvents: ['invoice.created'] },
      key,
    );
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/v1/webhook-endpoints/${created.body.id}`);
    expect(created.body).toEqual({
      id: expect.any(String),
      object: 'webhook_endpoint',
      url: target.url(),
      enabledEvents: ['invoice.created'],
      status: 'enabled',
      createdAt: expect.any(String),
      disabledAt: null,
      metadata: {},
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const replay = await registerEndpoint(
      t,
      company,
      { url: target.url(), enabledEvents: ['invoice.created'] },
      key,
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(created.body);

    // Stored sealed: the row (every column) holds neither the prefix nor any piece of the secret,
    // and the sealed value opens, with the processes' key, to exactly the secret the client got.
    const secret = created.body.secret as string;
    const { rows } = await db.query(
      `SELECT row_to_json(w)::text AS json, secret FROM webhook_endpoints w WHERE company_id = $1 AND id = $2`,
      [company.companyId, created.body.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].json).not.toContain('whsec_');
    for (const piece of piecesOf(secret)) expect(rows[0].json).not.toContain(piece);
    expect(rows[0].secret).toMatch(/^sealed:v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(testSecretBox().open(rows[0].secret)).toBe(secret);

    const { secret: _secret, ...withoutSecret } = created.body;
    const fetched = await t.http.get(`/v1/webhook-endpoints/${created.body.id}`).set(company.auth);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(withoutSecret);
    const list = await t.http.get('/v1/webhook-endpoints').set(company.auth);
    expect(list.body).toEqual({ object: 'list', data: [withoutSecret], hasMore: false });

    const other = await t.newCompany();
    expect((await t.http.get(`/v1/webhook-endpoints/${created.body.id}`).set(other.auth)).status).toBe(404);
    expect(
      (await t.http.get(`/v1/webhook-endpoints/${created.body.id}/attempts`).set(other.auth)).status,
    ).toBe(404);
    expect(
      (await t.http.post(`/v1/webhook-endpoints/${created.body.id}/disable`).set(other.auth)).status,
    ).toBe(404);
    expect((await t.http.get('/v1/webhook-endpoints').set(other.auth)).body.data).toEqual([]);
    expect((await t.http.get('/v1/webhook-endpoints/not-an-id').set(company.auth)).status).toBe(404);
  });

  // The stored replay body (idempotency_records.response_body) is sealed too (replayBodySealer).
  it('after a create and its replay, no column of any table holds the webhook secret in clear', async () => {
    const company = await t.newCompany();
    const target = await receiver();
    const key = newKey('endpoint');
    const body = { url: target.url(), enabledEvents: ['invoice.created'] };
    const created = await registerEndpoint(t, company, body, key);
    const replay = await registerEndpoint(t, company, body, key);
    expect(created.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.secret).toBe(created.body.secret);

    const secret = created.body.secret as string;
    // Two pieces of the random part: found whether stored with or without the prefix, in JSON or not.
    const needles = [secret.slice(6, 22), secret.slice(-17, -1)];
    expect(await columnsContaining(db, needles)).toEqual([]);
  });

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

    const attempts = await t.http.get(`/v1/webhook-endpoints/${endpoint.body.id}/attempts`).set(company.auth);
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
    const { rows } = await db.query(
      `SELECT event_id, status FROM webhook_deliveries WHERE company_id = $1 ORDER BY event_id = $2`,
      [company.companyId, delivered],
    );
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
    const attempts = await t.http.get(`/v1/webhook-endpoints/${a.body.id}/attempts`).set(company.auth);
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
    const slowAttempts = await t.http.get(`/v1/webhook-endpoints/${slow.body.id}/attempts`).set(company.auth);
    expect(slowAttempts.body.data[0]).toMatchObject({
      result: 'failed',
      statusCode: null,
      error: 'timed out after 2000 ms',
    });
    expect(slowAttempts.body.data[0].durationMs).toBeGreaterThanOrEqual(1900);
    expect(slowAttempts.body.data[1]).toMatchObject({ result: 'succeeded', statusCode: 200 });
    const refusedAttempts = await t.http
      .get(`/v1/webhook-endpoints/${refused.body.id}/attempts`)
      .set(company.auth);
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
      const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
      let attempts: Array<{ statusCode: number; result: string }> = [];
      while (attempts.length === 0 && Date.now() < deadline) {
        attempts = (await t.http.get(`/v1/webhook-endpoints/${endpoint.body.id}/attempts`).set(company.auth))
          .body.data;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(attempts[0]).toMatchObject({ statusCode: 302, result: 'failed' });
      expect(redirecting.requests).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
