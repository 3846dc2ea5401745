import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { problemOf, purchaseBooks, purchaseInvoiceCalls } from '../support/purchase-invoice-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { expectNothingStored } = purchaseBooks(() => db);

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create } = purchaseInvoiceCalls(() => t);

  describe('validation → 400 validation_failed naming the field; nothing is stored', () => {
    const valid = () => aPurchaseInvoice();
    const supplier = (fields: Record<string, unknown>) => valid().withSupplier(fields).build();
    const manyLines = Array.from({ length: 501 }, () => ({
      description: 'x',
      quantity: '1',
      unitPrice: 1,
      vatRate: '0',
    }));
    it.each<[string, string, Record<string, unknown>]>([
      ['documentNumber missing', 'documentNumber', valid().without('documentNumber').build()],
      ['documentNumber empty', 'documentNumber', valid().withDocumentNumber('').build()],
      ['documentNumber only spaces', 'documentNumber', valid().withDocumentNumber('   ').build()],
      [
        'documentNumber of 101 characters',
        'documentNumber',
        valid().withDocumentNumber('N'.repeat(101)).build(),
      ],
      // Upper-casing lengthens "ß" to "SS": the stored, normalized number would not fit.
      ['documentNumber of 60 "ß"', 'documentNumber', valid().withDocumentNumber('ß'.repeat(60)).build()],
      ['documentNumber with a line feed', 'documentNumber', valid().withDocumentNumber('INV\n001').build()],
      ['documentNumber a number', 'documentNumber', valid().with({ documentNumber: 1 }).build()],
      ['issueDate missing', 'issueDate', valid().without('issueDate').build()],
      ['issueDate not a date', 'issueDate', valid().with({ issueDate: '2026-02-30' }).build()],
      ['dueDate not a date', 'dueDate', valid().with({ dueDate: '30.12.2026' }).build()],
      ['supplier missing', 'supplier', valid().without('supplier').build()],
      ['supplier an array', 'supplier', valid().with({ supplier: [] }).build()],
      [
        'supplier name only punctuation, no VAT id',
        'supplier.name',
        supplier({ name: ' .,- ', countryCode: 'LT' }),
      ],
      [
        'supplier name only punctuation, null VAT id',
        'supplier.name',
        supplier({ name: '...', vatId: null, countryCode: 'LT' }),
      ],
      [
        'supplier VAT id in lower case',
        'supplier.vatId',
        supplier({ name: 'UAB', vatId: 'lt1000', countryCode: 'LT' }),
      ],
      ['supplier country missing', 'supplier.countryCode', supplier({ name: 'UAB Tiekėjas' })],
      ['currency unknown', 'currency', valid().with({ currency: 'EURO' }).build()],
      // build() fills in a default line when none was added: empty the lines afterwards.
      ['lines empty', 'lines', { ...valid().build(), lines: [] }],
      ['501 lines', 'lines', valid().with({ lines: manyLines }).build()],
      ['a negative unit price', 'lines[0].unitPrice', valid().withLine({ unitPrice: -1 }).build()],
      ['a VAT rate over 100', 'lines[0].vatRate', valid().withLine({ vatRate: '101' }).build()],
      ['customer (unknown field)', 'customer', { ...valid().without('supplier').build(), customer: {} }],
      ['series (purchase invoices have none)', 'series', valid().with({ series: 'INV' }).build()],
    ])('%s', async (_name, field, body) => {
      const company = await t.newCompany();
      const key = newKey();

      const response = await create(company, body, key);

      const problem = problemOf(response, 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
      await expectNothingStored(company);
    });

    it('a supplier name of only punctuation is fine when the VAT id identifies the supplier', async () => {
      const company = await t.newCompany();
      const response = await create(
        company,
        aPurchaseInvoice().withSupplier({ name: '—', vatId: 'LT100009876543', countryCode: 'LT' }).build(),
      );
      expect(response.status).toBe(201);
    });

    it('a document number of exactly 100 characters is accepted', async () => {
      const company = await t.newCompany();
      const documentNumber = 'n'.repeat(100);
      const response = await create(company, aPurchaseInvoice().withDocumentNumber(documentNumber).build());
      expect(response.status).toBe(201);
      expect(response.body.documentNumber).toBe(documentNumber);
    });
  });
});
