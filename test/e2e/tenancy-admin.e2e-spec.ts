import { createHash, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { loadConfig } from '../../apps/api/src/config';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/test-app';
import { eventually } from '../support/provider-sandbox';
import { columnsContaining } from '../support/stored-text-scan';
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

  const { count } = tenancyCalls(() => ({ t, db }));

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

/**
 * Requests that have not authenticated, on `/admin` and `/v1` alike: the scheme's case, their own
 * messages, and the address's rate limit (RATE_LIMIT_UNVERIFIED_PER_SECOND), tighter than a
 * company's (unlimited here).
 */
describe('admission of requests that have not authenticated', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    // The address's burst is at most 2 × 5 per second, shared among live processes.
    t = await startTestApp({ RATE_LIMIT_UNVERIFIED_PER_SECOND: '5' });
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  const createCompany = (authorization: string | undefined, name: string) => {
    const request = t.http.post('/admin/companies').set('Idempotency-Key', newKey('company'));
    return (authorization === undefined ? request : request.set('Authorization', authorization)).send({
      name,
      countryCode: 'LT',
      currency: 'EUR',
    });
  };

  it('takes the scheme in any case (RFC 9110), as /v1 does', async () => {
    expect((await createCompany(`bearer ${TEST_ADMIN_TOKEN}`, `Admin ${randomUUID()}`)).status).toBe(201);
    expect((await createCompany(`BEARER ${TEST_ADMIN_TOKEN}`, `Admin ${randomUUID()}`)).status).toBe(201);
  });

  it('a wrong or missing token is told what is required: the admin token, not an API key', async () => {
    const wrong = await createCompany(`Bearer ${TEST_ADMIN_TOKEN}x`, `Admin ${randomUUID()}`);
    expectProblem(wrong, 401, 'unauthorized');
    expect((wrong.body as { detail: string }).detail).toBe(
      'A valid admin token is required: send "Authorization: Bearer <ADMIN_API_TOKEN>".',
    );
  });

  it("guesses take from their address's rate limit: a flood meets 429 with Retry-After; the token still works", async () => {
    const name = `Admin ${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        createCompany(index % 2 === 0 ? `Bearer guess-${index}` : undefined, name),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expectProblem(limited[0], 429, 'rate_limited');
    expect(limited[0].headers['retry-after']).toMatch(/^\d+$/);
    expect(await createCompany(`Bearer ${TEST_ADMIN_TOKEN}`, `Admin ${randomUUID()}`)).toMatchObject({
      status: 201,
    });
    const { rows } = await db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM companies WHERE name = $1`,
      [name],
    );
    expect(rows[0].count).toBe(0);
  });

  it('unknown API keys meet the address limit on /v1; a verified key is not held up by it', async () => {
    const company = await t.newCompany();
    // Verified once (its first request takes from the address too, which earlier tests emptied).
    const first = await eventually(async () => {
      const answer = await t.http.get('/v1/events').set(company.auth);
      return answer.status === 429 ? undefined : answer;
    });
    expect(first.status).toBe(200);

    const unknown = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        t.http.get('/v1/events').set('Authorization', `Bearer lk_unknown${String(index).padStart(39, '0')}`),
      ),
    );
    expect(unknown.every((answer) => answer.status === 401 || answer.status === 429)).toBe(true);
    expect(unknown.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    // The company's own limit is unlimited here: its burst passes whole.
    const verified = await Promise.all(
      Array.from({ length: 40 }, () => t.http.get('/v1/events').set(company.auth)),
    );
    expect(verified.map((answer) => answer.status)).toEqual(Array(40).fill(200));
  });
});
