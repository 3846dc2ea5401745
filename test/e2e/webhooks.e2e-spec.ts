import { hostname } from 'node:os';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { columnsContaining } from '../support/stored-text-scan';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';
import { testSecretBox } from '../support/test-secrets';
import { deliveryCalls, piecesOf, registerEndpoint, startDeliveryApp } from '../support/webhook-endpoints';
import type { WebhookReceiver } from '../support/webhook-receiver';

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
    'http://foo.localhost./hook',
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

  it("registers every name alike, resolving none (no oracle): this machine's own name (loopback) and one that does not exist", async () => {
    const company = await t.newCompany();
    // Deliveries resolve the name and refuse both with the same words (webhook-target.spec.ts).
    for (const url of [`http://${hostname()}/hook`, 'http://no-such-host.invalid/hook']) {
      const response = await registerEndpoint(t, company, { url, enabledEvents: ['*'] });
      expect({ url, status: response.status }).toEqual({ url, status: 201 });
    }
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
    t = await startDeliveryApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await t.close();
    await db.end();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  const { receiver } = deliveryCalls(() => ({ t, receivers }));

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
});
