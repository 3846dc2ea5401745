import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { CREATE, OPERATION, purchaseBooks, purchaseInvoiceCalls } from '../support/purchase-invoice-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf, purchaseInvoiceIds } = purchaseBooks(() => db);

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create, record, expectDuplicateOf } = purchaseInvoiceCalls(() => t);

  describe('one purchase invoice per supplier document', () => {
    it('the same document under a new key → 409 purchase_invoice_duplicate naming the first; stored and replayed', async () => {
      const company = await t.newCompany();
      const body = aPurchaseInvoice().build();
      const first = await record(company, body);
      const key = newKey();
      const changed = {
        ...body,
        lines: [{ description: 'Re-upload', quantity: '1', unitPrice: 1, vatRate: '0' }],
      };

      const duplicate = await create(company, changed, key);
      await expectDuplicateOf(duplicate, first.body.id);
      expect(duplicate.headers['idempotent-replayed']).toBeUndefined();
      const replay = await create(company, changed, key);

      expect(replay.status).toBe(409);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(duplicate.text);
      expect(await purchaseInvoiceIds(company)).toEqual([first.body.id]);
      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
      expect(books.records.find((row) => row.idempotency_key === key)).toMatchObject({
        operation: OPERATION,
        response_status: 409,
        response_body: duplicate.text,
      });
    });

    it.each<{ name: string; first: Record<string, unknown>; second: Record<string, unknown> }>([
      {
        name: 'the same VAT id under another name',
        first: { supplier: { name: 'UAB Tiekėjas', vatId: 'LT100009876543', countryCode: 'LT' } },
        second: {
          supplier: { name: 'Tiekėjas UAB (Kaunas branch)', vatId: 'LT100009876543', countryCode: 'LT' },
        },
      },
      {
        name: 'no VAT id, the name spelled "UAB  Tiekėjas," then "uab tiekėjas"',
        first: { supplier: { name: 'UAB  Tiekėjas,', countryCode: 'LT' } },
        second: { supplier: { name: 'uab tiekėjas', countryCode: 'LT' } },
      },
      {
        name: 'no VAT id, the name with quotes, full-width letters and a no-break space',
        first: { supplier: { name: '„UAB Tiekėjas“', countryCode: 'LT' } },
        second: { supplier: { name: 'ＵＡＢ\u00a0TIEKĖJAS', countryCode: 'LT' } },
      },
      {
        name: 'document number "inv 001" then "INV001"',
        first: { documentNumber: 'inv 001' },
        second: { documentNumber: 'INV001' },
      },
      {
        name: 'document number with surrounding spaces',
        first: { documentNumber: 'INV-77' },
        second: { documentNumber: '  inv-77 ' },
      },
    ])('is recognised across representations: $name', async ({ first, second }) => {
      const company = await t.newCompany();
      const documentNumber = `DOC-${newKey()}`;
      const base = aPurchaseInvoice().withDocumentNumber(documentNumber);
      const original = await record(company, base.with(first).build());

      const again = await create(
        company,
        aPurchaseInvoice().withDocumentNumber(documentNumber).with(second).build(),
      );

      await expectDuplicateOf(again, original.body.id);
      expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it('the same document number from two different suppliers → two purchase invoices', async () => {
      const company = await t.newCompany();
      const fromA = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'UAB Tiekėjas', vatId: 'LT100009876543', countryCode: 'LT' })
          .build(),
      );
      const fromB = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'UAB Kitas', vatId: 'LT100001111111', countryCode: 'LT' })
          .build(),
      );
      const fromC = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'Jonas Jonaitis', countryCode: 'LT' })
          .build(),
      );

      expect(new Set([fromA.body.id, fromB.body.id, fromC.body.id]).size).toBe(3);
      const { rows } = await db.query(
        `SELECT supplier_key, document_number FROM purchase_invoices WHERE company_id = $1 ORDER BY supplier_key`,
        [company.companyId],
      );
      expect(rows).toEqual([
        { supplier_key: 'name:jonas jonaitis', document_number: 'INV-0001' },
        { supplier_key: 'vat:LT100001111111', document_number: 'INV-0001' },
        { supplier_key: 'vat:LT100009876543', document_number: 'INV-0001' },
      ]);
      expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 3, journalEntries: 3 });
    });

    it('the same supplier document in two companies → one purchase invoice each', async () => {
      const companyA = await t.newCompany();
      const companyB = await t.newCompany();
      const body = aPurchaseInvoice().build();

      await record(companyA, body);
      await record(companyB, body);

      expect(await booksOf(companyA)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
      expect(await booksOf(companyB)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it('10 parallel uploads of one document under 10 keys → exactly one purchase invoice; the others name it', async () => {
      const company = await t.newCompany();
      const documentNumber = `PAR-${newKey()}`;
      const bodies = Array.from({ length: 10 }, (_, index) =>
        aPurchaseInvoice()
          .withDocumentNumber(index % 2 === 0 ? documentNumber : ` ${documentNumber.toLowerCase()} `)
          .withLine({ description: `Attempt ${index}` })
          .build(),
      );

      const answers = await Promise.all(
        bodies.map(async (body) => {
          const response = await fetch(`${t.baseUrl}${CREATE}`, {
            method: 'POST',
            headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': newKey() },
            body: JSON.stringify(body),
          });
          return { status: response.status, body: (await response.json()) as Record<string, unknown> };
        }),
      );

      const created = answers.filter((answer) => answer.status === 201);
      const duplicates = answers.filter((answer) => answer.status === 409);
      expect(created).toHaveLength(1);
      expect(duplicates).toHaveLength(9);
      const winnerId = created[0].body.id;
      for (const duplicate of duplicates) {
        expect(duplicate.body).toMatchObject({
          code: 'purchase_invoice_duplicate',
          existingPurchaseInvoiceId: winnerId,
        });
      }
      expect(await purchaseInvoiceIds(company)).toEqual([winnerId]);
      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
      expect(books.records.map((row) => row.response_status).sort()).toEqual([201, ...Array(9).fill(409)]);
      const balance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(balance.body.totals).toEqual([
        { currency: 'EUR', debitTotal: '12100', creditTotal: '12100', balanced: true },
      ]);
    });
  });
});
