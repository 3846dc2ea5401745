import {
  invoicesOf,
  isafCalls,
  isafDates,
  parse,
  REGISTRATION_NUMBER,
  totalsPerTaxCode,
} from '../support/isaf-file';
import { anInvoice } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';

describe('i.SAF 1.2 export', () => {
  let t: TestApp;
  const { today, month, monthEnd, lastMonthDay } = isafDates();

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const { companyWithProfile, post, exportIsaf } = isafCalls(() => ({ t }));

  it('a month with invoices, a credit note and purchases: totals per tax code, KS references its invoice', async () => {
    const company = await companyWithProfile();
    const invoice = await post(
      company,
      '/v1/sales/invoices/create',
      anInvoice()
        .with({
          customer: { name: 'UAB "Pirkėjas" & <Ko> R&D; &amp;', countryCode: 'LT', vatId: 'LT100001234567' },
        })
        .withLine({ quantity: '2', unitPrice: 5000, vatRate: '21' })
        .withLine({ quantity: '1', unitPrice: 1000, vatRate: '9' })
        .build(),
    );
    // Issued last month, credited this month: the credit note is in this month's file, the invoice is not.
    const lastMonths = await post(
      company,
      '/v1/sales/invoices/create',
      anInvoice()
        .with({ issueDate: lastMonthDay, customer: { name: 'Kunde ApS', countryCode: 'DK' } })
        .withLine({ quantity: '1', unitPrice: 20000, vatRate: '21' })
        .build(),
    );
    const creditNote = await post(company, '/v1/sales/credit-notes/create', {
      invoiceId: lastMonths.id,
      reason: 'other',
      lines: [{ description: 'Refund', quantity: '1', unitPrice: 5000, vatRate: '21' }],
    });
    const purchase = await post(company, '/v1/purchases/invoices/create', {
      supplier: { name: 'UAB Tiekėjas', countryCode: 'LT', vatId: 'LT200002345678' },
      documentNumber: 'T-77',
      issueDate: today,
      lines: [
        { description: 'Paper', quantity: '1', unitPrice: 4000, vatRate: '21' },
        { description: 'Medicine', quantity: '1', unitPrice: 2000, vatRate: '5' },
      ],
    });
    await post(company, '/v1/purchases/invoices/create', {
      supplier: { name: 'UAB Tiekėjas', countryCode: 'LT', vatId: 'LT200002345678' },
      documentNumber: 'T-76',
      issueDate: lastMonthDay,
      lines: [{ description: 'Paper', quantity: '1', unitPrice: 999, vatRate: '21' }],
    });

    const response = await exportIsaf(company, `month=${month}&dataType=F`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="isaf-${month}-F.xml"`);
    const file = parse(response.body as string).iSAFFile;
    expect(file['@_xmlns']).toBe('http://www.vmi.lt/cms/imas/isaf');
    expect(file.Header.FileDescription).toMatchObject({
      FileVersion: 'iSAF1.2',
      DataType: 'F',
      SoftwareName: 'ledgerkey',
      RegistrationNumber: REGISTRATION_NUMBER,
      NumberOfParts: '1',
      PartNumber: '1',
      SelectionCriteria: { SelectionStartDate: `${month}-01`, SelectionEndDate: monthEnd },
    });
    expect(file.Header.FileDescription.FileDateCreated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);

    const sales = invoicesOf(file.SourceDocuments.SalesInvoices);
    expect(sales.map((document) => [document.InvoiceNo, document.InvoiceType])).toEqual([
      [invoice.number, 'SF'],
      [creditNote.number, 'KS'],
    ]);
    const [sf, ks] = sales;
    expect(sf.CustomerInfo).toEqual({
      CustomerID: 'LT100001234567',
      VATRegistrationNumber: 'LT100001234567',
      RegistrationNumber: 'ND',
      Country: 'LT',
      Name: 'UAB "Pirkėjas" & <Ko> R&D; &amp;',
    });
    expect(sf).toMatchObject({
      InvoiceDate: invoice.issueDate,
      VATPointDate: invoice.issueDate,
      References: '',
    });
    expect(sf.DocumentTotals.DocumentTotal).toEqual([
      {
        TaxableValue: '100.00',
        TaxCode: 'PVM1',
        TaxPercentage: '21',
        Amount: '21.00',
        VATPointDate2: { '@_xsi:nil': 'true' },
      },
      {
        TaxableValue: '10.00',
        TaxCode: 'PVM2',
        TaxPercentage: '9',
        Amount: '0.90',
        VATPointDate2: { '@_xsi:nil': 'true' },
      },
    ]);
    expect(ks.CustomerInfo).toMatchObject({ VATRegistrationNumber: 'ND', Country: 'DK', Name: 'Kunde ApS' });
    expect(ks.References).toEqual({
      Reference: [{ ReferenceNo: lastMonths.number, ReferenceDate: lastMonthDay }],
    });
    expect(ks.InvoiceDate).toBe(creditNote.createdAt.slice(0, 10));
    expect(ks.DocumentTotals.DocumentTotal).toEqual([
      {
        TaxableValue: '-50.00',
        TaxCode: 'PVM1',
        TaxPercentage: '21',
        Amount: '-10.50',
        VATPointDate2: { '@_xsi:nil': 'true' },
      },
    ]);
    expect(totalsPerTaxCode(sales)).toEqual({
      PVM1: { taxable: 10000 - 5000, vat: 2100 - 1050 },
      PVM2: { taxable: 1000, vat: 90 },
    });

    const purchases = invoicesOf(file.SourceDocuments.PurchaseInvoices);
    expect(purchases).toHaveLength(1);
    expect(purchases[0]).toMatchObject({
      InvoiceNo: 'T-77',
      SupplierInfo: {
        SupplierID: 'LT200002345678',
        VATRegistrationNumber: 'LT200002345678',
        RegistrationNumber: 'ND',
        Country: 'LT',
        Name: 'UAB Tiekėjas',
      },
      InvoiceDate: today,
      InvoiceType: 'SF',
      VATPointDate: today,
      RegistrationAccountDate: purchase.createdAt.slice(0, 10),
    });
    expect(totalsPerTaxCode(purchases)).toEqual({
      PVM1: { taxable: 4000, vat: 840 },
      PVM3: { taxable: 2000, vat: 100 },
    });
    expect(
      purchases[0].DocumentTotals.DocumentTotal.every((total) => total.VATPointDate2 === undefined),
    ).toBe(true);

    // The file's VAT per side equals the VAT report of the same month.
    const report = await t.http
      .get('/v1/reports/vat')
      .query({ from: `${month}-01`, to: monthEnd })
      .set(company.auth);
    expect(report.body.currencies[0].totals).toMatchObject({
      salesVat: String(2100 - 1050 + 90),
      purchasesVat: '940',
    });
  });

  it('the OpenAPI document offers the file as an application/xml download (Swagger UI shows a download link)', async () => {
    const document = await t.http.get('/docs/openapi.json');
    const operation = document.body.paths['/v1/exports/isaf'].get;
    expect(operation.operationId).toBe('exportIsaf');
    expect(operation.responses['200'].content).toEqual({
      'application/xml': { schema: { type: 'string', format: 'binary' } },
    });
    expect(operation.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual([
      'dataType',
      'month',
    ]);
  });

  it('the elements come in the XSD order', async () => {
    const company = await companyWithProfile();
    await post(company, '/v1/sales/invoices/create', anInvoice().build());
    const xml = (await exportIsaf(company, `month=${month}&dataType=S`)).body as string;

    const order = (names: string[]) => names.map((name) => xml.indexOf(`<${name}`));
    const ascending = (positions: number[]) =>
      positions.every((position, i) => position >= 0 && (i === 0 || position > positions[i - 1]));
    expect(
      ascending(
        order([
          'FileVersion',
          'FileDateCreated',
          'DataType',
          'SoftwareCompanyName',
          'SoftwareName',
          'SoftwareVersion',
          'RegistrationNumber',
          'NumberOfParts',
          'PartNumber',
          'SelectionCriteria',
          'SelectionStartDate',
          'SelectionEndDate',
        ]),
      ),
    ).toBe(true);
    expect(
      ascending(
        order([
          'InvoiceNo',
          'CustomerInfo',
          'CustomerID',
          'VATRegistrationNumber>',
          'Country',
          'Name',
          'InvoiceDate',
          'InvoiceType',
          'SpecialTaxation',
          'References',
          'VATPointDate>',
          'DocumentTotals',
          'TaxableValue',
          'TaxCode',
          'TaxPercentage',
          'Amount',
          'VATPointDate2',
        ]),
      ),
    ).toBe(true);
  });

  it.each([
    ['S', ['SalesInvoices']],
    ['P', ['PurchaseInvoices']],
    ['F', ['PurchaseInvoices', 'SalesInvoices']],
  ])('an empty month with dataType %s is a valid file with empty %s', async (dataType, sections) => {
    const company = await companyWithProfile();

    const response = await exportIsaf(company, `month=2026-02&dataType=${dataType}`);

    expect(response.status).toBe(200);
    const file = parse(response.body as string).iSAFFile;
    expect(file.Header.FileDescription).toMatchObject({
      DataType: dataType,
      SelectionCriteria: { SelectionStartDate: '2026-02-01', SelectionEndDate: '2026-02-28' },
    });
    expect(Object.keys(file.SourceDocuments)).toEqual(sections);
    for (const section of sections) expect(file.SourceDocuments[section as 'SalesInvoices']).toBe('');
  });

  it.each([
    ['month missing', 'dataType=F', 'month'],
    ['month not YYYY-MM', 'month=2026-13&dataType=F', 'month'],
    ['month as a date', 'month=2026-11-01&dataType=F', 'month'],
    ['dataType missing', 'month=2026-11', 'dataType'],
    ['dataType unknown', 'month=2026-11&dataType=X', 'dataType'],
    ['dataType lower case', 'month=2026-11&dataType=f', 'dataType'],
  ])('%s → 400 validation_failed problem', async (_case, query, field) => {
    const company = await companyWithProfile();
    const response = await t.http.get(`/v1/exports/isaf?${query}`).set(company.auth);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.code).toBe('validation_failed');
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(field);
  });
});
