import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { loadConfig } from '../../apps/api/src/config';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';
import { columnsContaining } from '../support/stored-text-scan';
import { testDatabasePool } from '../support/test-database';

const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

function expectProblem(response: Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_JSON);
  expect(JSON.parse(response.text)).toMatchObject({
    type: `https://docs.ledgerkey.dev/errors/${code}`,
    status,
    code,
  });
}

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

  async function issueInvoice(
    company: TestCompany,
    body = anInvoice().withLine().build(),
  ): Promise<Response> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return response;
  }

  async function count(sql: string, params: unknown[]): Promise<number> {
    const { rows } = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, params);
    return rows[0].count;
  }

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

  describe('POST /admin/companies', () => {
    const companyNamed = (name: string) => ({ name, countryCode: 'LT', currency: 'EUR' });
    const companiesNamed = (name: string) => count('companies WHERE name = $1', [name]);
    const createCompany = (key: string | undefined, body: object) => {
      const request = t.http.post('/admin/companies').set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
      return key === undefined ? request.send(body) : request.set('Idempotency-Key', key).send(body);
    };

    it('answers 401 unauthorized for a wrong or missing admin token and creates nothing', async () => {
      const name = `Tenancy ${randomUUID()}`;
      const key = newKey('company');

      const wrong = await t.http
        .post('/admin/companies')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}x`)
        .set('Idempotency-Key', key)
        .send(companyNamed(name));
      const missing = await t.http
        .post('/admin/companies')
        .set('Idempotency-Key', key)
        .send(companyNamed(name));
      const company = await t.newCompany();
      const apiKeyInstead = await t.http
        .post('/admin/companies')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(companyNamed(name));

      expectProblem(wrong, 401, 'unauthorized');
      expectProblem(missing, 401, 'unauthorized');
      expectProblem(apiKeyInstead, 401, 'unauthorized');
      expect(await companiesNamed(name)).toBe(0);
    });

    it('validates its body: countryCode "lt" → 400 validation_failed naming the field', async () => {
      const name = `Tenancy ${randomUUID()}`;

      const response = await createCompany(newKey('company'), { name, countryCode: 'lt', currency: 'EUR' });

      expectProblem(response, 400, 'validation_failed');
      const { errors } = JSON.parse(response.text) as { errors: Array<{ field: string; message: string }> };
      expect(errors.map((error) => error.field)).toEqual(expect.arrayContaining(['countryCode']));
      expect(errors.every((error) => error.field === 'countryCode')).toBe(true);
      expect(await companiesNamed(name)).toBe(0);
    });

    it('returns the API key once and stores only its SHA-256 hash', async () => {
      const name = `Tenancy ${randomUUID()}`;

      const response = await createCompany(newKey('company'), companyNamed(name));

      expect(response.status).toBe(201);
      const { companyId, apiKey } = response.body as { companyId: string; apiKey: string };
      expect(Object.keys(response.body).sort()).toEqual(['apiKey', 'companyId']);
      expect(apiKey).toMatch(/^lk_[A-Za-z0-9_-]{43}$/);

      const { rows: keys } = await db.query<{
        key_hash: Buffer;
        key_prefix: string;
        revoked_at: Date | null;
      }>(`SELECT key_hash, key_prefix, revoked_at FROM api_keys WHERE company_id = $1`, [companyId]);
      expect(keys).toHaveLength(1);
      expect(keys[0].key_hash.equals(createHash('sha256').update(apiKey, 'utf8').digest())).toBe(true);
      expect(keys[0].revoked_at).toBeNull();
      expect(apiKey.startsWith(keys[0].key_prefix)).toBe(true);
      expect(keys[0].key_prefix.length).toBeLessThan(apiKey.length / 2);

      const secretPart = apiKey.slice('lk_'.length);
      expect(
        await count(`api_keys k WHERE row_to_json(k)::text LIKE '%' || $1 || '%'`, [secretPart.slice(10)]),
      ).toBe(0);
      expect(
        await count(`companies c WHERE row_to_json(c)::text LIKE '%' || $1 || '%'`, [secretPart.slice(10)]),
      ).toBe(0);

      const { rows: company } = await db.query(
        `SELECT name, country_code, currency FROM companies WHERE id = $1`,
        [companyId],
      );
      expect(company).toEqual([{ name, country_code: 'LT', currency: 'EUR' }]);
      const authenticated = await t.http.get('/v1/sales/invoices').set('Authorization', `Bearer ${apiKey}`);
      expect(authenticated.status).toBe(200);
    });

    it('without Idempotency-Key → 400 idempotency_key_missing, and creates nothing', async () => {
      const name = `Tenancy ${randomUUID()}`;

      const response = await createCompany(undefined, companyNamed(name));

      expectProblem(response, 400, 'idempotency_key_missing');
      expect(await companiesNamed(name)).toBe(0);
    });

    it('an operator retry with the same key replays the same company and API key byte for byte: one company', async () => {
      const name = `Tenancy ${randomUUID()}`;
      const key = newKey('company');

      const first = await createCompany(key, companyNamed(name));
      const retry = await createCompany(key, companyNamed(name));

      expect([first.status, retry.status]).toEqual([201, 201]);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(retry.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(retry.headers['idempotency-key-expires']).toBe(first.headers['idempotency-key-expires']);
      expect(await companiesNamed(name)).toBe(1);
      const replayedKey = (retry.body as { apiKey: string }).apiKey;
      expect(
        (await t.http.get('/v1/sales/invoices').set('Authorization', `Bearer ${replayedKey}`)).status,
      ).toBe(200);

      // Operator scope (the nil UUID, no company); the answer went through the response sealer.
      const { rows } = await db.query(
        `SELECT company_id, state, response_status, response_sealed FROM idempotency_records
          WHERE operation = 'admin.companies.create' AND idempotency_key = $1`,
        [key],
      );
      expect(rows).toEqual([
        {
          company_id: '00000000-0000-0000-0000-000000000000',
          state: 'completed',
          response_status: 201,
          response_sealed: true,
        },
      ]);
      // Only the key's hash is stored; its replayable answer is sealed: the key is nowhere in clear.
      expect(await columnsContaining(db, [replayedKey.slice(3, 19), replayedKey.slice(-16)])).toEqual([]);
    });

    it('the same key for another company → 422 idempotency_key_reused; nothing is created', async () => {
      const key = newKey('company');
      const first = await createCompany(key, companyNamed(`Tenancy ${randomUUID()}`));
      expect(first.status).toBe(201);
      const otherName = `Tenancy ${randomUUID()}`;

      const reused = await createCompany(key, companyNamed(otherName));

      expectProblem(reused, 422, 'idempotency_key_reused');
      expect(await companiesNamed(otherName)).toBe(0);
    });

    it('an operator key does not collide with the same key used by a company on its own routes', async () => {
      const key = newKey('shared');
      const company = await t.newCompany();
      const invoice = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(anInvoice().withLine().build());
      const created = await createCompany(key, companyNamed(`Tenancy ${randomUUID()}`));

      expect([invoice.status, created.status]).toEqual([201, 201]);
      expect(created.headers['idempotent-replayed']).toBeUndefined();
    });
  });
});

/**
 * Its own application, started after the suite above has closed its one: @Transactional()
 * resolves the most recently constructed TransactionHost process-wide, so two live apps in
 * one Jest worker would share (and, on close, break) each other's transactions.
 */
describe('admin API switched off (ADMIN_API_TOKEN="")', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_TOKEN: '' });
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  it('loadConfig treats the empty string as unset', () => {
    expect(loadConfig({ ADMIN_API_TOKEN: '' }).adminApiToken).toBeUndefined();
  });

  it('POST /admin/companies answers 404 not_found, with or without a token, and creates nothing', async () => {
    const name = `Tenancy ${randomUUID()}`;
    const body = { name, countryCode: 'LT', currency: 'EUR' };

    const withToken = await t.http
      .post('/admin/companies')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send(body);
    const withoutToken = await t.http.post('/admin/companies').send(body);

    expectProblem(withToken, 404, 'not_found');
    expectProblem(withoutToken, 404, 'not_found');
    const { rows } = await db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM companies WHERE name = $1`,
      [name],
    );
    expect(rows[0].count).toBe(0);
  });
});
