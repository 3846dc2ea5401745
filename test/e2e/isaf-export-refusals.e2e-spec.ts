import { invoicesOf, isafCalls, isafDates, parse } from '../support/isaf-file';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';

describe('i.SAF 1.2 export', () => {
  let t: TestApp;
  const { month } = isafDates();

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const { companyWithProfile, post, exportIsaf } = isafCalls(() => ({ t }));

  it('without a registration number in the profile → 422 company_profile_incomplete', async () => {
    const company = await t.newCompany();
    const response = await t.http.get(`/v1/exports/isaf?month=${month}&dataType=F`).set(company.auth);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('company_profile_incomplete');
  });

  it('a rate without a tax code → 422 naming it; configured, it is exported under its code', async () => {
    const company = await companyWithProfile();
    await post(company, '/v1/sales/invoices/create', anInvoice().withLine({ vatRate: '0' }).build());

    const refused = await t.http.get(`/v1/exports/isaf?month=${month}&dataType=S`).set(company.auth);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'isaf_tax_code_missing', vatRates: ['0'] });

    const defaults = await t.http.get('/v1/company/isaf-settings').set(company.auth);
    expect(defaults.body).toEqual({
      object: 'isaf_settings',
      taxCodes: [
        { vatRate: '21', taxCode: 'PVM1' },
        { vatRate: '9', taxCode: 'PVM2' },
        { vatRate: '5', taxCode: 'PVM3' },
      ],
      configured: false,
    });
    const key = newKey('isaf');
    const body = {
      taxCodes: [
        { vatRate: '0.00', taxCode: 'PVM5' },
        { vatRate: '21', taxCode: 'PVM1' },
      ],
    };
    const update = await t.http
      .post('/v1/company/isaf-settings/update')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    const replay = await t.http
      .post('/v1/company/isaf-settings/update')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(update.status).toBe(200);
    expect(update.body).toEqual({
      object: 'isaf_settings',
      taxCodes: [
        { vatRate: '21', taxCode: 'PVM1' },
        { vatRate: '0', taxCode: 'PVM5' },
      ],
      configured: true,
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(update.text);

    const exported = await exportIsaf(company, `month=${month}&dataType=S`);
    expect(exported.status).toBe(200);
    const [document] = invoicesOf(parse(exported.body as string).iSAFFile.SourceDocuments.SalesInvoices);
    expect(document.DocumentTotals.DocumentTotal).toEqual([
      {
        TaxableValue: '100.00',
        TaxCode: 'PVM5',
        TaxPercentage: '0',
        Amount: '0.00',
        VATPointDate2: { '@_xsi:nil': 'true' },
      },
    ]);
  });

  it.each([
    [
      'a duplicate rate',
      {
        taxCodes: [
          { vatRate: '21', taxCode: 'PVM1' },
          { vatRate: '21.0', taxCode: 'PVM2' },
        ],
      },
      'taxCodes',
    ],
    [
      'a code outside the classifier',
      { taxCodes: [{ vatRate: '21', taxCode: 'VAT1' }] },
      'taxCodes[0].taxCode',
    ],
    ['no codes', { taxCodes: [] }, 'taxCodes'],
  ])('isaf-settings with %s → 400 validation_failed', async (_case, body, field) => {
    const company = await companyWithProfile();
    const response = await t.http
      .post('/v1/company/isaf-settings/update')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(400);
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(field);
  });

  it('documents not in EUR → 422 isaf_currency_unsupported (the file would misstate them)', async () => {
    const company = await companyWithProfile();
    await post(company, '/v1/sales/invoices/create', anInvoice().with({ currency: 'USD' }).build());

    const sales = await t.http.get(`/v1/exports/isaf?month=${month}&dataType=S`).set(company.auth);
    const purchases = await exportIsaf(company, `month=${month}&dataType=P`);

    expect(sales.status).toBe(422);
    expect(sales.body.code).toBe('isaf_currency_unsupported');
    expect(purchases.status).toBe(200);
  });
});
