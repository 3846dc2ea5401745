import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

function expectProblem(response: Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_JSON);
  expect(JSON.parse(response.text)).toMatchObject({ status, code });
}

function bearer(secret: string): { Authorization: string } {
  return { Authorization: `Bearer ${secret}` };
}

interface CreatedKey {
  id: string;
  object: string;
  name: string | null;
  scope: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  secret: string;
}

/** Every route of the contract a key uses that is not a read, from the committed OpenAPI document. */
function writeRoutes(): Array<{ method: string; path: string }> {
  const document = JSON.parse(readFileSync(resolve(__dirname, '../../docs/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(
        ([method, operation]) => method !== 'get' && (operation.security ?? []).some((s) => 'bearer' in s),
      )
      .map(([method]) => ({ method, path })),
  );
}

describe('API keys', () => {
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

  function createKey(company: { auth: { Authorization: string } }, body: object, key = newKey('api-key')) {
    return t.http.post('/v1/api-keys/create').set(company.auth).set('Idempotency-Key', key).send(body);
  }

  async function aKey(
    company: TestCompany,
    scope: 'read_write' | 'read_only',
    name?: string,
  ): Promise<CreatedKey> {
    const response = await createKey(company, { scope, ...(name === undefined ? {} : { name }) });
    expect(response.status).toBe(201);
    return response.body as CreatedKey;
  }

  async function count(sql: string, params: unknown[]): Promise<number> {
    const { rows } = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, params);
    return rows[0].count;
  }

  describe('POST /v1/api-keys/create', () => {
    it('creates a named key of the requested scope: the secret once, only its hash stored', async () => {
      const company = await t.newCompany();

      const response = await createKey(company, { name: 'Finance team', scope: 'read_only' });

      expect(response.status).toBe(201);
      const key = response.body as CreatedKey;
      expect(key).toEqual({
        id: expect.any(String),
        object: 'api_key',
        name: 'Finance team',
        scope: 'read_only',
        prefix: key.secret.slice(0, 9),
        createdAt: expect.any(String),
        revokedAt: null,
        secret: expect.stringMatching(/^lk_[A-Za-z0-9_-]{43}$/),
      });
      expect(response.headers.location).toBe(`/v1/api-keys/${key.id}`);
      const { rows } = await db.query<{ key_hash: Buffer; company_id: string }>(
        'SELECT key_hash, company_id FROM api_keys WHERE id = $1',
        [key.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].company_id).toBe(company.companyId);
      expect(rows[0].key_hash.equals(createHash('sha256').update(key.secret).digest())).toBe(true);
      // The new key works.
      expect((await t.http.get('/v1/api-keys').set(bearer(key.secret))).status).toBe(200);
    });

    it('the name is optional', async () => {
      const company = await t.newCompany();
      const key = await aKey(company, 'read_write');
      expect(key.name).toBeNull();
    });

    it('a retry with the same key replays the same answer, secret included, byte for byte; one key exists', async () => {
      const company = await t.newCompany();
      const idempotencyKey = newKey('api-key');

      const first = await createKey(company, { name: 'ERP', scope: 'read_write' }, idempotencyKey);
      const retry = await createKey(company, { scope: 'read_write', name: 'ERP' }, idempotencyKey);

      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(await count(`api_keys WHERE company_id = $1 AND name = 'ERP'`, [company.companyId])).toBe(1);
    });

    it('the stored answer is sealed: the secret is nowhere in the database in clear', async () => {
      const company = await t.newCompany();
      const idempotencyKey = newKey('api-key');
      const { secret } = (await createKey(company, { scope: 'read_write' }, idempotencyKey))
        .body as CreatedKey;

      const { rows } = await db.query<{ response_sealed: boolean }>(
        `SELECT response_sealed FROM idempotency_records
          WHERE company_id = $1 AND operation = 'api-keys.create' AND idempotency_key = $2`,
        [company.companyId, idempotencyKey],
      );
      expect(rows).toEqual([{ response_sealed: true }]);
      const secretPart = secret.slice('lk_'.length + 6);
      expect(
        await count(`idempotency_records r WHERE row_to_json(r)::text LIKE '%' || $1 || '%'`, [secretPart]),
      ).toBe(0);
      expect(await count(`api_keys k WHERE row_to_json(k)::text LIKE '%' || $1 || '%'`, [secretPart])).toBe(
        0,
      );
    });

    it('the same Idempotency-Key with another body → 422 idempotency_key_reused; nothing created', async () => {
      const company = await t.newCompany();
      const idempotencyKey = newKey('api-key');
      await createKey(company, { scope: 'read_write' }, idempotencyKey);

      const other = await createKey(company, { scope: 'read_only' }, idempotencyKey);

      expectProblem(other, 422, 'idempotency_key_reused');
      expect(await count(`api_keys WHERE company_id = $1`, [company.companyId])).toBe(2);
    });

    it.each([
      [{}, 'scope'],
      [{ scope: 'admin' }, 'scope'],
      [{ scope: 'read_only', name: '' }, 'name'],
      [{ scope: 'read_only', name: 'x'.repeat(101) }, 'name'],
      [{ scope: 'read_only', name: 42 }, 'name'],
    ])('refuses %j → 400 validation_failed on %s, nothing stored', async (body, field) => {
      const company = await t.newCompany();
      const idempotencyKey = newKey('api-key');

      const response = await createKey(company, body, idempotencyKey);

      expectProblem(response, 400, 'validation_failed');
      expect((response.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toContain(
        field,
      );
      expect(await count(`idempotency_records WHERE idempotency_key = $1`, [idempotencyKey])).toBe(0);
      expect(await count(`api_keys WHERE company_id = $1`, [company.companyId])).toBe(1);
    });

    it('without Idempotency-Key → 400 idempotency_key_missing', async () => {
      const company = await t.newCompany();
      const response = await t.http
        .post('/v1/api-keys/create')
        .set(company.auth)
        .send({ scope: 'read_only' });
      expectProblem(response, 400, 'idempotency_key_missing');
    });
  });

  describe('GET /v1/api-keys', () => {
    it('lists every key of the company in creation order, revoked ones too, never a secret', async () => {
      const company = await t.newCompany();
      const second = await aKey(company, 'read_only', 'Browse');
      const third = await aKey(company, 'read_write', 'ERP');
      await t.http.post(`/v1/api-keys/${third.id}/revoke`).set(company.auth).expect(200);

      const response = await t.http.get('/v1/api-keys').set(company.auth);

      expect(response.status).toBe(200);
      const list = response.body as { object: string; data: CreatedKey[]; hasMore: boolean };
      expect(list.object).toBe('list');
      expect(list.hasMore).toBe(false);
      expect(list.data.map((key) => [key.name, key.scope, key.revokedAt === null])).toEqual([
        [null, 'read_write', true],
        ['Browse', 'read_only', true],
        ['ERP', 'read_write', false],
      ]);
      expect(list.data[0].prefix).toBe(company.apiKey.slice(0, 9));
      expect(response.text).not.toContain(second.secret.slice(9));
      expect(response.text).not.toContain(company.apiKey.slice(9));
      for (const key of list.data) expect(key).not.toHaveProperty('secret');
    });

    it('pages with limit and startingAfter', async () => {
      const company = await t.newCompany();
      await aKey(company, 'read_only', 'one');
      await aKey(company, 'read_only', 'two');

      const first = await t.http.get('/v1/api-keys?limit=2').set(company.auth);
      const last = first.body.data[1].id as string;
      const next = await t.http.get(`/v1/api-keys?limit=2&startingAfter=${last}`).set(company.auth);

      expect(first.body.hasMore).toBe(true);
      expect(next.body).toMatchObject({ hasMore: false, data: [{ name: 'two' }] });
    });

    it('GET /v1/api-keys/{id} answers one key without its secret; unknown → 404', async () => {
      const company = await t.newCompany();
      const key = await aKey(company, 'read_only', 'one');

      const found = await t.http.get(`/v1/api-keys/${key.id}`).set(company.auth);
      const unknown = await t.http.get(`/v1/api-keys/${randomUUID()}`).set(company.auth);

      expect(found.status).toBe(200);
      const { secret: _secret, ...view } = key;
      expect(found.body).toEqual(view);
      expectProblem(unknown, 404, 'not_found');
    });
  });

  describe('POST /v1/api-keys/{id}/revoke', () => {
    it('revokes: the key answers 401 at once; revoking again answers the same revoked key', async () => {
      const company = await t.newCompany();
      const key = await aKey(company, 'read_write', 'old');
      expect((await t.http.get('/v1/api-keys').set(bearer(key.secret))).status).toBe(200);

      const revoked = await t.http.post(`/v1/api-keys/${key.id}/revoke`).set(company.auth);
      const again = await t.http.post(`/v1/api-keys/${key.id}/revoke`).set(company.auth);

      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(revoked.body);
      expectProblem(await t.http.get('/v1/api-keys').set(bearer(key.secret)), 401, 'unauthorized');
      expect((await t.http.get('/v1/api-keys').set(company.auth)).status).toBe(200);
    });

    it('a key may revoke itself when another read_write key remains', async () => {
      const company = await t.newCompany();
      const key = await aKey(company, 'read_write');

      const response = await t.http.post(`/v1/api-keys/${key.id}/revoke`).set(bearer(key.secret));

      expect(response.status).toBe(200);
      expectProblem(await t.http.get('/v1/api-keys').set(bearer(key.secret)), 401, 'unauthorized');
    });

    it("the company's last active read_write key → 409 last_read_write_key; it keeps working", async () => {
      const company = await t.newCompany();
      await aKey(company, 'read_only');
      const { body: list } = await t.http.get('/v1/api-keys').set(company.auth);
      const first = (list as { data: CreatedKey[] }).data[0];

      const response = await t.http.post(`/v1/api-keys/${first.id}/revoke`).set(company.auth);

      expectProblem(response, 409, 'last_read_write_key');
      expect((await t.http.get('/v1/api-keys').set(company.auth)).status).toBe(200);
    });

    it('two read_write keys revoked at the same time: one is revoked, the other refused; one stays active', async () => {
      const company = await t.newCompany();
      const second = await aKey(company, 'read_write');
      const { body: list } = await t.http.get('/v1/api-keys').set(company.auth);
      const first = (list as { data: CreatedKey[] }).data[0];

      const answers = await Promise.all(
        [first.id, second.id].map((id) => t.http.post(`/v1/api-keys/${id}/revoke`).set(company.auth)),
      );

      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(
        await count(`api_keys WHERE company_id = $1 AND scope = 'read_write' AND revoked_at IS NULL`, [
          company.companyId,
        ]),
      ).toBe(1);
    });

    it("another company's key → 404 not_found, and it stays active", async () => {
      const owner = await t.newCompany();
      const other = await t.newCompany();
      const key = await aKey(owner, 'read_write');

      expectProblem(await t.http.post(`/v1/api-keys/${key.id}/revoke`).set(other.auth), 404, 'not_found');
      expectProblem(await t.http.get(`/v1/api-keys/${key.id}`).set(other.auth), 404, 'not_found');
      const { body } = await t.http.get('/v1/api-keys').set(other.auth);
      expect((body as { data: CreatedKey[] }).data.map((k) => k.id)).not.toContain(key.id);
      expect((await t.http.get('/v1/api-keys').set(bearer(key.secret))).status).toBe(200);
    });

    it('an id that is no UUID → 404 not_found', async () => {
      const company = await t.newCompany();
      expectProblem(await t.http.post('/v1/api-keys/nope/revoke').set(company.auth), 404, 'not_found');
    });
  });

  describe('a read_only key', () => {
    const routes = writeRoutes();

    it('the contract has the write routes this suite expects', () => {
      expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(
        expect.arrayContaining([
          'post /v1/sales/invoices/create',
          'post /v1/api-keys/create',
          'post /v1/api-keys/{id}/revoke',
          'post /v1/webhook-endpoints/{id}/disable',
        ]),
      );
    });

    it.each(routes)(
      '$method $path → 403 forbidden; nothing runs, nothing is stored under the key',
      async (route) => {
        const company = await t.newCompany();
        const readOnly = await aKey(company, 'read_only');
        const idempotencyKey = newKey('read-only');
        const path = route.path.replace('{id}', readOnly.id);
        const keysBefore = await count('api_keys WHERE company_id = $1 AND revoked_at IS NULL', [
          company.companyId,
        ]);

        const response = await t.http
          .post(path)
          .set(bearer(readOnly.secret))
          .set('Idempotency-Key', idempotencyKey)
          .send({ scope: 'read_write' });

        expectProblem(response, 403, 'forbidden');
        expect(await count('idempotency_records WHERE idempotency_key = $1', [idempotencyKey])).toBe(0);
        expect(
          await count('api_keys WHERE company_id = $1 AND revoked_at IS NULL', [company.companyId]),
        ).toBe(keysBefore);
      },
    );

    it('reads: lists and the ledger answer 200', async () => {
      const company = await t.newCompany();
      const readOnly = await aKey(company, 'read_only');
      for (const path of ['/v1/api-keys', '/v1/sales/invoices', '/v1/ledger/trial-balance', '/v1/events']) {
        expect((await t.http.get(path).set(bearer(readOnly.secret))).status).toBe(200);
      }
    });
  });

  describe('in the database', () => {
    it('a key is immutable but for its revocation, and is never deleted', async () => {
      const company = await t.newCompany();
      const key = await aKey(company, 'read_only');

      await expect(
        db.query(`UPDATE api_keys SET scope = 'read_write' WHERE id = $1`, [key.id]),
      ).rejects.toThrow(/immutable/);
      await expect(db.query(`DELETE FROM api_keys WHERE id = $1`, [key.id])).rejects.toThrow(
        /cannot be deleted/,
      );
      await db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [key.id]);
      await expect(db.query(`UPDATE api_keys SET revoked_at = NULL WHERE id = $1`, [key.id])).rejects.toThrow(
        /immutable/,
      );
    });
  });
});
