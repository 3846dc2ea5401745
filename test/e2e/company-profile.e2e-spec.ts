import { randomUUID } from 'node:crypto';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';

const PROFILE = {
  legalName: 'UAB Pardavėjas',
  vatId: 'LT100009876543',
  registrationNumber: '304567890',
  address: { street: 'Gedimino pr. 1', city: 'Vilnius', postalCode: '01103', countryCode: 'LT' },
  iban: 'LT601010012345678901',
  email: 'billing@example.lt',
  peppolId: '0200:304567890',
};

const EMPTY_ADDRESS = { street: null, city: null, postalCode: null };

describe('company profile and the seller snapshot of documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const getProfile = (company: TestCompany) => t.http.get('/v1/company/profile').set(company.auth);
  const updateProfile = (company: TestCompany, body: object, key = newKey('profile')) =>
    t.http.post('/v1/company/profile/update').set(company.auth).set('Idempotency-Key', key).send(body);

  async function issueInvoice(company: TestCompany, body: object = anInvoice().build()) {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return response.body as { id: string; seller: unknown };
  }

  it('a company created with a profile answers it on GET /v1/company/profile', async () => {
    const company = await t.newCompany({ profile: PROFILE });

    const response = await getProfile(company);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ object: 'company_profile', ...PROFILE });
  });

  it('without a profile: the legal name is the company name, the address country its country', async () => {
    const company = await t.newCompany({ name: 'UAB Be Profilio', countryCode: 'DK', currency: 'DKK' });

    expect((await getProfile(company)).body).toEqual({
      object: 'company_profile',
      legalName: 'UAB Be Profilio',
      vatId: null,
      registrationNumber: null,
      address: { ...EMPTY_ADDRESS, countryCode: 'DK' },
      iban: null,
      email: null,
      peppolId: null,
    });
  });

  it('update replaces the whole profile, answers it, and a retry with the key replays it', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const key = newKey('profile');
    const body = { legalName: 'Pardavėjas ApS', vatId: 'DK12345678', address: { city: 'København' } };

    const first = await updateProfile(company, body, key);
    const retry = await updateProfile(company, body, key);

    const expected = {
      object: 'company_profile',
      legalName: 'Pardavėjas ApS',
      vatId: 'DK12345678',
      registrationNumber: null,
      address: { street: null, city: 'København', postalCode: null, countryCode: 'LT' },
      iban: null,
      email: null,
      peppolId: null,
    };
    expect(first.status).toBe(200);
    expect(first.body).toEqual(expected);
    expect(first.headers['idempotency-key-expires']).toBeDefined();
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(first.text);
    expect((await getProfile(company)).body).toEqual(expected);
  });

  it('the same key with another profile → 422 idempotency_key_reused; the profile is unchanged', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const key = newKey('profile');
    await updateProfile(company, { ...PROFILE, email: 'first@example.lt' }, key);

    const reused = await updateProfile(company, { ...PROFILE, email: 'second@example.lt' }, key);

    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect((await getProfile(company)).body.email).toBe('first@example.lt');
  });

  it.each([
    ['no legal name', { vatId: 'LT100009876543' }, 'legalName'],
    ['an IBAN with a wrong check sum', { ...PROFILE, iban: 'LT601010012345678902' }, 'iban'],
    ['an IBAN with spaces', { ...PROFILE, iban: 'LT60 1010 0123 4567 8901' }, 'iban'],
    ['a lower-case VAT id', { ...PROFILE, vatId: 'lt100009876543' }, 'vatId'],
    ['an unknown address country', { ...PROFILE, address: { countryCode: 'XX' } }, 'address.countryCode'],
    ['a Peppol id without scheme', { ...PROFILE, peppolId: '304567890' }, 'peppolId'],
    ['an unknown member', { ...PROFILE, language: 'lt' }, 'language'],
  ])('%s → 400 validation_failed naming the field; nothing is stored', async (_case, body, field) => {
    const company = await t.newCompany({ profile: PROFILE });

    const response = await updateProfile(company, body);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(field);
    expect((await getProfile(company)).body).toEqual({ object: 'company_profile', ...PROFILE });
  });

  it('a bad profile at company creation → 400 validation_failed naming the field; no company', async () => {
    const name = `UAB ${randomUUID()}`;
    const response = await t.http
      .post('/admin/companies')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .set('Idempotency-Key', newKey('company'))
      .send({ name, countryCode: 'LT', currency: 'EUR', profile: { legalName: name, iban: 'LT60' } });

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toEqual([
      'profile.iban',
      'profile.iban',
    ]);
  });

  it('invoices and credit notes keep the seller they were issued with; later ones take the new profile', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const before = await issueInvoice(company);
    expect(before.seller).toEqual(PROFILE);

    const updated = { ...PROFILE, legalName: 'UAB Naujas Pavadinimas', iban: 'LT121000011101001000' };
    expect((await updateProfile(company, updated)).status).toBe(200);
    const after = await issueInvoice(company);
    const creditNote = await t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ invoiceId: before.id, reason: 'other' });

    expect(after.seller).toEqual(updated);
    expect(creditNote.status).toBe(201);
    expect(creditNote.body.seller).toEqual(updated);
    const stored = await t.http.get(`/v1/sales/invoices/${before.id}`).set(company.auth);
    expect(stored.body.seller).toEqual(PROFILE);
    const storedNote = await t.http.get(`/v1/sales/credit-notes/${creditNote.body.id}`).set(company.auth);
    expect(storedNote.body.seller).toEqual(updated);
    const list = await t.http.get('/v1/sales/invoices').set(company.auth);
    expect((list.body.data as Array<{ seller: unknown }>).map((invoice) => invoice.seller)).toEqual([
      PROFILE,
      updated,
    ]);
  });

  it("journal entries carry the document's date: an invoice's issue date, a purchase invoice's", async () => {
    const company = await t.newCompany();
    const invoice = await issueInvoice(company, anInvoice().with({ issueDate: '2026-03-15' }).build());
    const purchase = await t.http
      .post('/v1/purchases/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({
        supplier: { name: 'UAB Tiekėjas', countryCode: 'LT' },
        documentNumber: 'T-1',
        issueDate: '2026-02-28',
        lines: [{ description: 'Paper', quantity: '1', unitPrice: 1000, vatRate: '21' }],
      });
    expect(purchase.status).toBe(201);

    const entries = await t.http.get('/v1/ledger/entries').set(company.auth);

    expect(
      (entries.body.data as Array<{ sourceId: string; entryDate: string }>).map((entry) => [
        entry.sourceId,
        entry.entryDate,
      ]),
    ).toEqual([
      [invoice.id, '2026-03-15'],
      [purchase.body.id, '2026-02-28'],
    ]);
  });
});
