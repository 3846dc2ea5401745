import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * One definition of text length, Unicode code points, shared by validation, the OpenAPI document
 * and the schema's CHECKs: text that passes validation always fits its column, and text that does
 * not fit is a 400 naming the field, never a 500.
 */

/**
 * `count` code points, half of them variation selectors (U+FE0F), which class-validator's Length
 * did not count: the old validator saw about half this length, PostgreSQL's length() sees all of it.
 */
function withSelectors(count: number): string {
  return 'a\ufe0f'.repeat(Math.floor(count / 2)) + (count % 2 === 1 ? 'a' : '');
}

/** `count` code points that start with an emoji (one code point, two UTF-16 units) and a combining mark. */
function mixed(count: number): string {
  return '😀e\u0301' + withSelectors(count - 3);
}

type Body = Record<string, unknown>;

interface BoundedField {
  route: string;
  /** A valid body with the field set to `value`. */
  body(value: string, context: { invoiceId: string }): Body;
  field: string;
  max: number;
  /** The stored length (PostgreSQL's length()) of the field of the created resource. */
  stored: string;
}

function setIn(body: Body, path: string, value: string): Body {
  const keys = path.split('.');
  let target = body as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[keys[keys.length - 1]] = value;
  return body;
}

const invoice = (path: string) => (value: string) =>
  setIn(
    anInvoice()
      .withLine()
      .with({ customer: { name: 'UAB Pirkėjas', countryCode: 'LT' } })
      .build(),
    path,
    value,
  );
const creditNote = (path: string) => (value: string, context: { invoiceId: string }) =>
  setIn(
    {
      invoiceId: context.invoiceId,
      reason: 'other',
      lines: [{ description: 'Refund', quantity: '1', unitPrice: 1, vatRate: '21' }],
    },
    path,
    value,
  );
const purchase = (path: string) => (value: string) =>
  setIn(
    aPurchaseInvoice()
      .withSupplier({ name: 'UAB Tiekėjas', countryCode: 'LT', vatId: 'LT100009876543' })
      .withLine()
      .build(),
    path,
    value,
  );

const INVOICES = '/v1/sales/invoices/create';
const CREDIT_NOTES = '/v1/sales/credit-notes/create';
const PURCHASES = '/v1/purchases/invoices/create';
const COMPANIES = '/admin/companies';

const FIELDS: BoundedField[] = [
  {
    route: INVOICES,
    field: 'orderId',
    max: 100,
    body: invoice('orderId'),
    stored: 'SELECT length(order_id) FROM invoices WHERE id = $1',
  },
  {
    route: INVOICES,
    field: 'notes',
    max: 2000,
    body: invoice('notes'),
    stored: 'SELECT length(notes) FROM invoices WHERE id = $1',
  },
  {
    route: INVOICES,
    field: 'customer.name',
    max: 200,
    body: invoice('customer.name'),
    stored: `SELECT length(customer ->> 'name') FROM invoices WHERE id = $1`,
  },
  {
    route: INVOICES,
    field: 'customer.address',
    max: 500,
    body: invoice('customer.address'),
    stored: `SELECT length(customer ->> 'address') FROM invoices WHERE id = $1`,
  },
  {
    route: INVOICES,
    field: 'lines[0].description',
    max: 1000,
    body: invoice('lines.0.description'),
    stored: 'SELECT length(description) FROM invoice_lines WHERE invoice_id = $1',
  },
  {
    route: CREDIT_NOTES,
    field: 'memo',
    max: 2000,
    body: creditNote('memo'),
    stored: 'SELECT length(memo) FROM credit_notes WHERE id = $1',
  },
  {
    route: CREDIT_NOTES,
    field: 'lines[0].description',
    max: 1000,
    body: creditNote('lines.0.description'),
    stored: 'SELECT length(description) FROM credit_note_lines WHERE credit_note_id = $1',
  },
  {
    route: PURCHASES,
    field: 'documentNumber',
    max: 100,
    body: purchase('documentNumber'),
    stored: 'SELECT length(document_number) FROM purchase_invoices WHERE id = $1',
  },
  {
    route: PURCHASES,
    field: 'supplier.name',
    max: 200,
    body: purchase('supplier.name'),
    stored: `SELECT length(supplier ->> 'name') FROM purchase_invoices WHERE id = $1`,
  },
  {
    route: PURCHASES,
    field: 'supplier.address',
    max: 500,
    body: purchase('supplier.address'),
    stored: `SELECT length(supplier ->> 'address') FROM purchase_invoices WHERE id = $1`,
  },
  {
    route: PURCHASES,
    field: 'notes',
    max: 2000,
    body: purchase('notes'),
    stored: 'SELECT length(notes) FROM purchase_invoices WHERE id = $1',
  },
  {
    route: PURCHASES,
    field: 'lines[0].description',
    max: 1000,
    body: purchase('lines.0.description'),
    stored: 'SELECT length(description) FROM purchase_invoice_lines WHERE purchase_invoice_id = $1',
  },
  {
    route: COMPANIES,
    field: 'name',
    max: 200,
    body: (value) => ({ name: value, countryCode: 'LT', currency: 'EUR' }),
    stored: 'SELECT length(name) FROM companies WHERE id = $1',
  },
];

describe('text bounds: one length, in code points, from validation to CHECK', () => {
  let t: TestApp;
  let db: Pool;
  let company: TestCompany;
  let invoiceId: string;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
    company = await t.newCompany();
    const issued = await t.http
      .post(INVOICES)
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(anInvoice().withLine({ quantity: '1000', unitPrice: 1000, vatRate: '21' }).build());
    expect(issued.status).toBe(201);
    invoiceId = issued.body.id;
  });
  afterAll(async () => {
    await t.close();
    await db.end();
  });

  function send(route: string, body: Body) {
    const request = t.http.post(route).set('Idempotency-Key', newKey());
    return route === COMPANIES
      ? request.set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`).send(body)
      : request.set(company.auth).send(body);
  }

  function idOf(route: string, body: { id?: string; companyId?: string }): string {
    return (route === COMPANIES ? body.companyId : body.id) as string;
  }

  it.each(FIELDS.map((field) => [`${field.route} ${field.field}`, field] as const))(
    '%s: one code point over the bound (variation selectors included) → 400 naming the field',
    async (_name, { route, field, max, body }) => {
      const value = withSelectors(max + 1);
      const response = await send(route, body(value, { invoiceId }));
      expect({ status: response.status, code: response.body.code }).toEqual({
        status: 400,
        code: 'validation_failed',
      });
      expect(response.body.errors).toEqual([
        { field, message: expect.stringMatching(new RegExp(`\\b${max}\\b.*\\(Unicode code points\\)`)) },
      ]);
    },
  );

  it.each(FIELDS.map((field) => [`${field.route} ${field.field}`, field] as const))(
    '%s: exactly at the bound (emoji, combining mark, selectors) → created and stored whole',
    async (_name, { route, max, body, stored }) => {
      const value = mixed(max);
      expect(value.length).toBeGreaterThan(max);
      const response = await send(route, body(value, { invoiceId }));
      expect(response.status).toBe(201);
      const { rows } = await db.query<{ length: number }>(stored, [idOf(route, response.body)]);
      expect(rows).toEqual([{ length: max }]);
    },
  );

  it('the reproduction: orderId of 100 × "a\\ufe0f" and a company name of 150 × "a\\ufe0f" → 400, not 500', async () => {
    const invoiceResponse = await send(
      INVOICES,
      anInvoice().withLine().withOrderId('a\ufe0f'.repeat(100)).build(),
    );
    expect(invoiceResponse.status).toBe(400);
    expect(invoiceResponse.body.errors).toEqual([{ field: 'orderId', message: expect.any(String) }]);
    const companyResponse = await send(COMPANIES, {
      name: 'a\ufe0f'.repeat(150),
      countryCode: 'LT',
      currency: 'EUR',
    });
    expect(companyResponse.status).toBe(400);
    expect(companyResponse.body.errors).toEqual([{ field: 'name', message: expect.any(String) }]);
  });

  it("a supplier's name keeps PartyDto's rules (a string of 1–200) next to its own", async () => {
    for (const name of [42, '', withSelectors(201)]) {
      const response = await send(
        PURCHASES,
        aPurchaseInvoice()
          .withSupplier({ name, countryCode: 'LT', vatId: 'LT100009876543' })
          .withLine()
          .build(),
      );
      expect({
        name,
        status: response.status,
        fields: response.body.errors?.map((e: { field: string }) => e.field),
      }).toEqual({
        name,
        status: 400,
        fields: expect.arrayContaining(['supplier.name']),
      });
    }
  });

  it('the OpenAPI document states each bound as minLength/maxLength (which count code points too)', async () => {
    const document = (await t.http.get('/docs/openapi.json')).body as {
      components: { schemas: Record<string, { properties: Record<string, { maxLength?: number }> }> };
    };
    const maxLengthOf = (schema: string, property: string) =>
      document.components.schemas[schema].properties[property].maxLength;
    expect(maxLengthOf('IssueInvoiceDto', 'orderId')).toBe(100);
    expect(maxLengthOf('IssueInvoiceDto', 'notes')).toBe(2000);
    expect(maxLengthOf('PartyDto', 'name')).toBe(200);
    expect(maxLengthOf('PartyDto', 'address')).toBe(500);
    expect(maxLengthOf('PartyDto', 'email')).toBe(254);
    expect(maxLengthOf('InvoiceLineDto', 'description')).toBe(1000);
    expect(maxLengthOf('IssueCreditNoteDto', 'memo')).toBe(2000);
    expect(maxLengthOf('SupplierDto', 'name')).toBe(200);
    expect(maxLengthOf('RecordPurchaseInvoiceDto', 'documentNumber')).toBe(100);
    expect(maxLengthOf('RecordPurchaseInvoiceDto', 'notes')).toBe(2000);
    expect(maxLengthOf('CreateWebhookEndpointDto', 'url')).toBe(2048);
    // The admin API is in the operator document.
    const operator = (await t.http.get('/docs/operator/openapi.json')).body as typeof document;
    expect(operator.components.schemas.CreateCompanyDto.properties.name).toMatchObject({ maxLength: 200 });
  });

  describe('the schema bounds the same fields, in the same unit (CHECK … length())', () => {
    let ids: { invoice: string; creditNote: string; purchase: string };

    beforeAll(async () => {
      const party = { countryCode: 'LT', address: 'Gedimino pr. 1', email: 'ap@example.lt' };
      const sale = await send(
        INVOICES,
        anInvoice()
          .withLine()
          .with({ customer: { name: 'UAB Pirkėjas', ...party }, notes: 'Thanks' })
          .build(),
      );
      const credit = await send(CREDIT_NOTES, {
        invoiceId: sale.body.id,
        reason: 'other',
        memo: 'Partly',
        lines: [{ description: 'Refund', quantity: '1', unitPrice: 100, vatRate: '21' }],
      });
      const bought = await send(
        PURCHASES,
        aPurchaseInvoice()
          .withSupplier({ name: 'UAB Tiekėjas', vatId: 'LT100009876543', ...party })
          .withLine()
          .with({ notes: 'November' })
          .build(),
      );
      expect([sale.status, credit.status, bought.status]).toEqual([201, 201, 201]);
      ids = { invoice: sale.body.id, creditNote: credit.body.id, purchase: bought.body.id };
    });

    interface Copy {
      table: string;
      /** Selects the row to copy (parameter $1: the document id). */
      where: string;
      /** Columns changed so the copy is a new row under every unique constraint. */
      fresh: () => Record<string, unknown>;
      document: keyof typeof ids;
    }
    const invoiceCopy: Copy = {
      table: 'invoices',
      where: 'id = $1',
      fresh: () => ({ id: randomUUID(), sequence: 999_999, number: 'INV-999999', order_id: null }),
      document: 'invoice',
    };
    const creditNoteCopy: Copy = {
      table: 'credit_notes',
      where: 'id = $1',
      fresh: () => ({ id: randomUUID(), sequence: 999_999, number: 'CN-999999' }),
      document: 'creditNote',
    };
    const purchaseCopy: Copy = {
      table: 'purchase_invoices',
      where: 'id = $1',
      fresh: () => ({ id: randomUUID(), document_key: `COPY-${randomUUID()}` }),
      document: 'purchase',
    };
    const lineCopy = (table: string, parent: string, document: keyof typeof ids): Copy => ({
      table,
      where: `${parent} = $1 AND position = 1`,
      fresh: () => ({ position: 2 }),
      document,
    });

    const CASES: Array<[constraint: string, copy: Copy, column: string, party: string | null, max: number]> =
      [
        ['ck_invoices_notes_length', invoiceCopy, 'notes', null, 2000],
        ['ck_invoices_customer_name_length', invoiceCopy, 'customer', 'name', 200],
        ['ck_invoices_customer_address_length', invoiceCopy, 'customer', 'address', 500],
        ['ck_invoices_customer_email_length', invoiceCopy, 'customer', 'email', 254],
        [
          'ck_invoice_lines_description_length',
          lineCopy('invoice_lines', 'invoice_id', 'invoice'),
          'description',
          null,
          1000,
        ],
        ['ck_credit_notes_memo_length', creditNoteCopy, 'memo', null, 2000],
        [
          'ck_credit_note_lines_description_length',
          lineCopy('credit_note_lines', 'credit_note_id', 'creditNote'),
          'description',
          null,
          1000,
        ],
        ['ck_purchase_invoices_notes_length', purchaseCopy, 'notes', null, 2000],
        ['ck_purchase_invoices_supplier_name_length', purchaseCopy, 'supplier', 'name', 200],
        ['ck_purchase_invoices_supplier_address_length', purchaseCopy, 'supplier', 'address', 500],
        ['ck_purchase_invoices_supplier_email_length', purchaseCopy, 'supplier', 'email', 254],
        [
          'ck_purchase_invoice_lines_description_length',
          lineCopy('purchase_invoice_lines', 'purchase_invoice_id', 'purchase'),
          'description',
          null,
          1000,
        ],
      ];

    /** Inserts a copy of a stored row with one text changed, in a transaction that is rolled back. */
    async function insertCopy(
      copy: Copy,
      column: string,
      party: string | null,
      value: string,
    ): Promise<void> {
      const client = await db.connect();
      try {
        await client.query('BEGIN');
        const id = ids[copy.document];
        const { rows } = await client.query<{ current: unknown }>(
          `SELECT ${column} AS current FROM ${copy.table} WHERE ${copy.where}`,
          [id],
        );
        const changed = party === null ? value : { ...(rows[0].current as object), [party]: value };
        // The stored row as JSON, changed, and back into a row of the same table.
        await client.query(
          `INSERT INTO ${copy.table}
           SELECT (jsonb_populate_record(NULL::${copy.table}, to_jsonb(r) || $2::jsonb)).*
             FROM ${copy.table} r WHERE ${copy.where}`,
          [id, JSON.stringify({ ...copy.fresh(), [column]: changed })],
        );
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }

    it.each(CASES)(
      '%s: one code point over → check_violation',
      async (constraint, copy, column, party, max) => {
        await expect(insertCopy(copy, column, party, withSelectors(max + 1))).rejects.toMatchObject({
          code: '23514',
          constraint,
        });
      },
    );

    it.each(CASES)(
      '%s: at the bound, counted in code points → accepted',
      async (_name, copy, column, party, max) => {
        await expect(insertCopy(copy, column, party, mixed(max))).resolves.toBeUndefined();
      },
    );
  });
});
