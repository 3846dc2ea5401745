import { pdfText } from '../support/pdf-text';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { brokenRules, parseUbl } from '../support/peppol-rules';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';

/** A Lithuanian seller with everything Peppol asks of it. */
const PROFILE = {
  legalName: 'UAB Šviesų ąžuolas',
  vatId: 'LT100001234567',
  registrationNumber: '304561234',
  address: { street: 'Gedimino pr. 9', city: 'Vilnius', postalCode: 'LT-01103', countryCode: 'LT' },
  iban: 'LT601010012345678901',
  email: 'saskaitos@azuolas.lt',
  peppolId: '0200:304561234',
};

/** A Danish customer: reverse charge on the zero-rated line. */
const DANISH_CUSTOMER = {
  name: 'Ærø Øko Fødevarer ApS',
  vatId: 'DK12345678',
  countryCode: 'DK',
  address: 'Søndergade 5, 5970 Ærøskøbing',
  email: 'faktura@aeroe.dk',
};

/** Supertest collects a binary body into a Buffer with this parser. */
function binary(response: Response, callback: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('end', () => callback(null, Buffer.concat(chunks)));
}

describe('Peppol UBL and PDF of sales invoices and credit notes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function issueInvoice(
    company: TestCompany,
    body: object,
  ): Promise<{ id: string; number: string; grossTotal: number }> {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return response.body as { id: string; number: string; grossTotal: number };
  }

  const mixedInvoice = (orderId = `order-${newKey()}`) =>
    anInvoice()
      .with({
        customer: DANISH_CUSTOMER,
        orderId,
        dueDate: '2026-12-30',
        notes: 'Ačiū! Tak for handlen.',
      })
      .withLine({ description: 'Konsultacija: ąčęėįšųūž', quantity: '2', unitPrice: 5000, vatRate: '21' })
      .withLine({ description: 'Knyga „Žalgiris“', quantity: '3', unitPrice: 1999, vatRate: '9' })
      .withLine({
        description: 'Licencija (atvirkštinis apmokestinimas)',
        quantity: '1',
        unitPrice: 2500,
        vatRate: '0',
      })
      .build();

  const download = (company: TestCompany, path: string) =>
    t.http.get(path).set(company.auth).buffer(true).parse(binary);

  it('GET /v1/sales/invoices/{id}/ubl answers a Peppol BIS 3 Invoice that passes the rules', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const invoice = await issueInvoice(company, mixedInvoice('order-1041'));

    const response = await download(company, `/v1/sales/invoices/${invoice.id}/ubl`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="${invoice.number}.xml"`);
    const xml = (response.body as Buffer).toString('utf8');
    expect(brokenRules(xml)).toEqual([]);
    const doc = parseUbl(xml);
    expect(doc.root.localName).toBe('Invoice');
    expect(doc.text('cbc:ID')).toBe(invoice.number);
    expect(doc.text('cbc:CustomizationID')).toBe(
      'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    );
    expect(doc.text('cbc:ProfileID')).toBe('urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
    expect(doc.text('cbc:DueDate')).toBe('2026-12-30');
    expect(doc.text('cbc:BuyerReference')).toBe('order-1041');
    const seller = 'cac:AccountingSupplierParty/cac:Party/';
    expect(doc.text(`${seller}cbc:EndpointID`)).toBe('304561234');
    expect(doc.nodes(`${seller}cbc:EndpointID`)[0].getAttribute('schemeID')).toBe('0200');
    expect(doc.text(`${seller}cac:PartyLegalEntity/cbc:RegistrationName`)).toBe('UAB Šviesų ąžuolas');
    expect(doc.text(`${seller}cac:PartyTaxScheme/cbc:CompanyID`)).toBe('LT100001234567');
    expect(doc.text('cac:AccountingCustomerParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName')).toBe(
      'Ærø Øko Fødevarer ApS',
    );
    expect(doc.text('cac:PaymentMeans/cac:PayeeFinancialAccount/cbc:ID')).toBe('LT601010012345678901');
    const categories = doc
      .nodes('cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory')
      .map((category) => `${doc.text('cbc:ID', category)}:${doc.text('cbc:Percent', category)}`);
    expect(categories).toEqual(['S:21', 'S:9', 'AE:0']);
    // 100.00 + 59.97 + 25.00 net, 21.00 + 5.40 VAT
    expect(doc.text('cac:LegalMonetaryTotal/cbc:PayableAmount')).toBe('211.37');
    expect(invoice.grossTotal).toBe(21137);
  });

  it('GET /v1/sales/credit-notes/{id}/ubl answers a CreditNote referencing the invoice', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const invoice = await issueInvoice(company, mixedInvoice());
    const created = await t.http
      .post('/v1/sales/credit-notes/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ invoiceId: invoice.id, reason: 'order_change', memo: 'Grąžinta knyga' });
    expect(created.status).toBe(201);
    const note = created.body as { id: string; number: string; grossTotal: number };

    const response = await download(company, `/v1/sales/credit-notes/${note.id}/ubl`);

    expect(response.status).toBe(200);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="${note.number}.xml"`);
    const xml = (response.body as Buffer).toString('utf8');
    expect(brokenRules(xml)).toEqual([]);
    const doc = parseUbl(xml);
    expect(doc.root.localName).toBe('CreditNote');
    expect(doc.text('cbc:CreditNoteTypeCode')).toBe('381');
    expect(doc.text('cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID')).toBe(invoice.number);
    expect(doc.text('cac:AccountingCustomerParty/cac:Party/cbc:EndpointID')).toBe('DK12345678');
    expect(doc.text('cbc:Note')).toBe('Reason: Order change. Grąžinta knyga');
    expect(doc.text('cac:LegalMonetaryTotal/cbc:PayableAmount')).toBe((note.grossTotal / 100).toFixed(2));

    const pdf = await download(company, `/v1/sales/credit-notes/${note.id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const text = await pdfText(pdf.body as Buffer);
    expect(text).toContain(`Credit note ${note.number}`);
    expect(text).toContain(`${invoice.number} of `);
    expect(text).toContain('Ærø Øko Fødevarer ApS');
    expect(text).toContain('Grąžinta knyga');
  });

  it('GET /v1/sales/invoices/{id}/pdf shows every field and special letter, the same bytes every time', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const invoice = await issueInvoice(company, mixedInvoice());

    const first = await download(company, `/v1/sales/invoices/${invoice.id}/pdf`);
    const second = await download(company, `/v1/sales/invoices/${invoice.id}/pdf`);

    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/pdf');
    expect(first.headers['content-disposition']).toBe(`attachment; filename="${invoice.number}.pdf"`);
    expect((second.body as Buffer).equals(first.body as Buffer)).toBe(true);
    const text = await pdfText(first.body as Buffer);
    for (const expected of [
      `Invoice ${invoice.number}`,
      '2026-12-30',
      'UAB Šviesų ąžuolas',
      'Gedimino pr. 9',
      'LT-01103 Vilnius',
      'VAT id: LT100001234567',
      'Registration no.: 304561234',
      'Ærø Øko Fødevarer ApS',
      'Søndergade 5, 5970 Ærøskøbing',
      'VAT id: DK12345678',
      'Konsultacija: ąčęėįšųūž',
      'Knyga „Žalgiris“',
      'net 100.00 EUR',
      'VAT 21.00 EUR',
      'net 59.97 EUR',
      'VAT 5.40 EUR',
      'net 25.00 EUR',
      '211.37 EUR',
      'LT601010012345678901',
      'Ačiū! Tak for handlen.',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('keeps the seller it was issued with: a later profile change does not alter the document', async () => {
    const company = await t.newCompany({ profile: PROFILE });
    const before = await issueInvoice(company, mixedInvoice());
    const update = await t.http
      .post('/v1/company/profile/update')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send({ ...PROFILE, legalName: 'UAB Naujas Vardas' });
    expect(update.status).toBe(200);
    const after = await issueInvoice(company, mixedInvoice());

    const sellerName = async (id: string) =>
      parseUbl(
        ((await download(company, `/v1/sales/invoices/${id}/ubl`)).body as Buffer).toString('utf8'),
      ).text('cac:AccountingSupplierParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName');
    expect(await sellerName(before.id)).toBe('UAB Šviesų ąžuolas');
    expect(await sellerName(after.id)).toBe('UAB Naujas Vardas');
  });

  it('refuses UBL the rules would reject: 422 einvoice_not_representable naming the rules; the PDF still works', async () => {
    const company = await t.newCompany({ profile: { legalName: 'UAB Be PVM' } });
    const invoice = await issueInvoice(
      company,
      anInvoice()
        .with({ customer: { name: 'Jonas', countryCode: 'LT' } })
        .build(),
    );

    const response = await t.http.get(`/v1/sales/invoices/${invoice.id}/ubl`).set(company.auth);

    expect(response.status).toBe(422);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.body.code).toBe('einvoice_not_representable');
    const rules = (response.body.problems as { rule: string; message: string }[]).map(
      (problem) => problem.rule,
    );
    expect(rules).toEqual(['BR-S-02', 'BR-08', 'PEPPOL-EN16931-R020', 'PEPPOL-EN16931-R010']);
    const pdf = await download(company, `/v1/sales/invoices/${invoice.id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(await pdfText(pdf.body as Buffer)).toContain('UAB Be PVM');
  });

  it('404 for an unknown or malformed id and for another company’s document; 401 without a key', async () => {
    const owner = await t.newCompany({ profile: PROFILE });
    const stranger = await t.newCompany({ profile: PROFILE });
    const invoice = await issueInvoice(owner, mixedInvoice());

    for (const path of [
      `/v1/sales/invoices/${invoice.id}/ubl`,
      `/v1/sales/invoices/${invoice.id}/pdf`,
      '/v1/sales/credit-notes/00000000-0000-4000-8000-000000000000/ubl',
      '/v1/sales/credit-notes/00000000-0000-4000-8000-000000000000/pdf',
    ]) {
      const response = await t.http.get(path).set(stranger.auth);
      expect([path, response.status, response.body.code]).toEqual([path, 404, 'not_found']);
    }
    const malformed = await t.http.get('/v1/sales/invoices/not-a-uuid/ubl').set(owner.auth);
    expect([malformed.status, malformed.body.code]).toEqual([404, 'not_found']);
    const anonymous = await t.http.get(`/v1/sales/invoices/${invoice.id}/pdf`);
    expect(anonymous.status).toBe(401);
  });

  it('the OpenAPI document offers the downloads as application/xml and application/pdf', async () => {
    const response = await t.http.get('/docs/openapi.json');
    const paths = response.body.paths as Record<
      string,
      { get: { responses: Record<string, { content?: object }> } }
    >;
    for (const base of ['/v1/sales/invoices/{id}', '/v1/sales/credit-notes/{id}']) {
      expect(Object.keys(paths[`${base}/ubl`].get.responses['200'].content ?? {})).toEqual([
        'application/xml',
      ]);
      expect(Object.keys(paths[`${base}/pdf`].get.responses['200'].content ?? {})).toEqual([
        'application/pdf',
      ]);
    }
  });
});
