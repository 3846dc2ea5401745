import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import { aSettlement } from '../support/settlement.builder';
import {
  byInvoiceId,
  DEFAULT_GROSS,
  invoiceOf,
  ISO_INSTANT,
  issueInvoice,
  type SettlementBody,
  settlementBooks,
  settlementCalls,
  trialBalanceTotals,
  UUID,
} from '../support/settlement-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf } = settlementBooks(() => db);

describe('settlements', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create, settle, settlementEntries } = settlementCalls(() => t);

  describe('POST /v1/settlements/create', () => {
    it('records the payout: documented shape, stored rows, paid totals and one balanced posting', async () => {
      const company = await t.newCompany();
      const consulting = await issueInvoice(t, company);
      const books = await issueInvoice(
        t,
        company,
        anInvoice().withLine({ description: 'Books', quantity: '1', unitPrice: 3000, vatRate: '0' }).build(),
      );
      const body = aSettlement()
        .forPayout('po_1NxY')
        .withFee(150)
        .allocating(consulting.id, DEFAULT_GROSS)
        .allocating(books.id, 1000)
        .build();
      const before = new Date();

      const response = await create(company, newKey(), body);

      const after = new Date();
      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers.location).toBe(`/v1/settlements/${response.body.id}`);
      const settlement = JSON.parse(response.text) as SettlementBody;
      expect(settlement).toStrictEqual({
        id: expect.stringMatching(UUID),
        object: 'settlement',
        payoutId: 'po_1NxY',
        currency: 'EUR',
        paidAt: '2026-11-30T10:00:00.000Z',
        feeAmount: 150,
        allocatedTotal: 13_100,
        netAmount: 12_950,
        allocations: byInvoiceId([
          { invoiceId: consulting.id, invoiceNumber: consulting.number, amount: DEFAULT_GROSS },
          { invoiceId: books.id, invoiceNumber: books.number, amount: 1000 },
        ]),
        source: 'api',
        metadata: {},
        createdAt: expect.stringMatching(ISO_INSTANT),
      });
      const createdAt = Date.parse(settlement.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before.getTime());
      expect(createdAt).toBeLessThanOrEqual(after.getTime());

      const { rows } = await db.query(
        `SELECT company_id, payout_id, currency, paid_at, fee_amount::int, allocated_total::int, created_at
           FROM settlements WHERE id = $1`,
        [settlement.id],
      );
      expect(rows).toEqual([
        {
          company_id: company.companyId,
          payout_id: 'po_1NxY',
          currency: 'EUR',
          paid_at: new Date('2026-11-30T10:00:00Z'),
          fee_amount: 150,
          allocated_total: 13_100,
          created_at: new Date(settlement.createdAt),
        },
      ]);
      const { rows: allocations } = await db.query(
        `SELECT invoice_id, company_id, amount::int FROM settlement_allocations
          WHERE settlement_id = $1 ORDER BY invoice_id`,
        [settlement.id],
      );
      expect(allocations).toEqual(
        settlement.allocations.map((allocation) => ({
          invoice_id: allocation.invoiceId,
          company_id: company.companyId,
          amount: allocation.amount,
        })),
      );

      expect(await invoiceOf(t, company, consulting.id)).toMatchObject({
        grossTotal: DEFAULT_GROSS,
        paidTotal: DEFAULT_GROSS,
      });
      expect(await invoiceOf(t, company, books.id)).toMatchObject({ grossTotal: 3000, paidTotal: 1000 });

      expect(await settlementEntries(company)).toEqual([
        {
          id: expect.stringMatching(UUID),
          object: 'journal_entry',
          currency: 'EUR',
          sourceType: 'settlement',
          sourceId: settlement.id,
          memo: 'Settlement of payout po_1NxY',
          postedAt: settlement.createdAt,
          entryDate: settlement.paidAt.slice(0, 10),
          lines: [
            { account: 'bank', debit: 12_950, credit: 0 },
            { account: 'payment_fees', debit: 150, credit: 0 },
            { account: 'accounts_receivable', debit: 0, credit: 13_100 },
          ],
        },
      ]);
      const trialBalance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(trialBalance.body).toMatchObject({
        totals: [{ currency: 'EUR', debitTotal: '28200', creditTotal: '28200', balanced: true }],
      });
      expect((trialBalance.body as { data: unknown[] }).data).toEqual(
        expect.arrayContaining([
          {
            account: 'accounts_receivable',
            currency: 'EUR',
            debitTotal: '15100',
            creditTotal: '13100',
            balance: '2000',
          },
          { account: 'bank', currency: 'EUR', debitTotal: '12950', creditTotal: '0', balance: '12950' },
          { account: 'payment_fees', currency: 'EUR', debitTotal: '150', creditTotal: '0', balance: '150' },
        ]),
      );
      expect((await booksOf(company)).unbalancedEntries).toBe(0);
    });

    it('feeAmount defaults to 0 (no fee line); a fee equal to the allocations posts no bank line', async () => {
      const company = await t.newCompany();
      const first = await issueInvoice(t, company);
      const second = await issueInvoice(t, company);

      const noFee = (await settle(company, aSettlement().allocating(first.id, 5000).build())).body;
      const allFee = (await settle(company, aSettlement().withFee(2000).allocating(second.id, 2000).build()))
        .body;

      expect(noFee).toMatchObject({ feeAmount: 0, allocatedTotal: 5000, netAmount: 5000 });
      expect(allFee).toMatchObject({ feeAmount: 2000, allocatedTotal: 2000, netAmount: 0 });
      expect((await settlementEntries(company)).map((entry) => entry.lines)).toEqual([
        [
          { account: 'bank', debit: 5000, credit: 0 },
          { account: 'accounts_receivable', debit: 0, credit: 5000 },
        ],
        [
          { account: 'payment_fees', debit: 2000, credit: 0 },
          { account: 'accounts_receivable', debit: 0, credit: 2000 },
        ],
      ]);
      expect(await trialBalanceTotals(t, company)).toEqual([
        {
          currency: 'EUR',
          debitTotal: String(2 * DEFAULT_GROSS + 7000),
          creditTotal: String(2 * DEFAULT_GROSS + 7000),
          balanced: true,
        },
      ]);
    });

    it('partial payments add up to the gross; one unit more is 422 naming the invoice and amounts', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);

      await settle(company, aSettlement().allocating(invoice.id, 5000).build());
      await settle(
        company,
        aSettlement()
          .allocating(invoice.id, DEFAULT_GROSS - 5000)
          .build(),
      );
      const overpaid = await create(company, newKey(), aSettlement().allocating(invoice.id, 1).build());

      const problem = problemOf(overpaid, 422, 'allocation_exceeds_outstanding');
      expect(problem.detail).toBe(
        `Allocation of 1 to invoice ${invoice.number} (${invoice.id}) exceeds its outstanding amount 0 ` +
          `(gross ${DEFAULT_GROSS} − credited 0 − paid ${DEFAULT_GROSS}).`,
      );
      expect(await invoiceOf(t, company, invoice.id)).toMatchObject({ paidTotal: DEFAULT_GROSS });
      expect((await booksOf(company)).settlements).toHaveLength(2);
    });

    it('credited amounts are not outstanding: gross − credited − paid bounds an allocation', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      // Stands in for a credit note of 2100 (running totals are the columns a credit note changes).
      await db.query('UPDATE invoices SET credited_total = 2100 WHERE id = $1', [invoice.id]);

      const rejected = await create(company, newKey(), aSettlement().allocating(invoice.id, 10_001).build());
      expect(problemOf(rejected, 422, 'allocation_exceeds_outstanding').detail).toContain(
        'exceeds its outstanding amount 10000 (gross 12100 − credited 2100 − paid 0)',
      );
      const accepted = await settle(company, aSettlement().allocating(invoice.id, 10_000).build());
      expect(accepted.body.allocatedTotal).toBe(10_000);
      expect(await invoiceOf(t, company, invoice.id)).toMatchObject({
        creditedTotal: 2100,
        paidTotal: 10_000,
      });
    });

    it('paidAt is stored as an instant and answered in UTC with milliseconds', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);

      const { body } = await settle(
        company,
        aSettlement().with({ paidAt: '2026-12-01T01:30:00.25+02:00' }).allocating(invoice.id, 100).build(),
      );

      expect(body.paidAt).toBe('2026-11-30T23:30:00.250Z');
      const { rows } = await db.query('SELECT paid_at FROM settlements WHERE id = $1', [body.id]);
      expect(rows).toEqual([{ paid_at: new Date('2026-11-30T23:30:00.250Z') }]);
    });
  });

  describe('GET /v1/settlements', () => {
    it('GET /v1/settlements/{id} returns byte-identical JSON to the create response', async () => {
      const company = await t.newCompany();
      const first = await issueInvoice(t, company);
      const second = await issueInvoice(t, company);
      const created = await settle(
        company,
        aSettlement().withFee(99).allocating(second.id, 700).allocating(first.id, 300).build(),
      );

      const fetched = await t.http.get(`/v1/settlements/${created.body.id}`).set(company.auth);

      expect(fetched.status).toBe(200);
      expect(fetched.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(fetched.text).toBe(created.text);
    });

    it("another company's settlement, an unknown id and a malformed id are all 404 not_found", async () => {
      const owner = await t.newCompany();
      const other = await t.newCompany();
      const invoice = await issueInvoice(t, owner);
      const { body } = await settle(owner, aSettlement().allocating(invoice.id, 100).build());

      for (const [company, id] of [
        [other, body.id],
        [owner, randomUUID()],
        [owner, 'not-an-id'],
      ] as const) {
        const response = await t.http.get(`/v1/settlements/${id}`).set(company.auth);
        problemOf(response, 404, 'not_found');
      }
      const list = await t.http.get('/v1/settlements').set(other.auth);
      expect(list.body).toEqual({ object: 'list', data: [], hasMore: false });
    });

    it('lists in creation order and pages with startingAfter: no duplicates, nothing missing', async () => {
      const company = await t.newCompany();
      const invoice = await issueInvoice(t, company);
      const created: SettlementBody[] = [];
      for (let index = 0; index < 5; index += 1) {
        created.push(
          (
            await settle(
              company,
              aSettlement()
                .allocating(invoice.id, 100 + index)
                .build(),
            )
          ).body,
        );
      }

      const pages: Array<{ object: string; data: SettlementBody[]; hasMore: boolean }> = [];
      let cursor: string | undefined;
      do {
        const response = await t.http
          .get(`/v1/settlements?limit=2${cursor === undefined ? '' : `&startingAfter=${cursor}`}`)
          .set(company.auth);
        expect(response.status).toBe(200);
        pages.push(response.body);
        cursor = pages.at(-1)?.data.at(-1)?.id;
      } while (pages.at(-1)?.hasMore === true && pages.length < 5);

      expect(pages.map((page) => [page.object, page.data.length, page.hasMore])).toEqual([
        ['list', 2, true],
        ['list', 2, true],
        ['list', 1, false],
      ]);
      expect(pages.flatMap((page) => page.data)).toEqual(created);
      const all = await t.http.get('/v1/settlements').set(company.auth);
      expect(all.body).toEqual({ object: 'list', data: created, hasMore: false });
      const afterUnknown = await t.http
        .get(`/v1/settlements?startingAfter=${randomUUID()}`)
        .set(company.auth);
      expect(afterUnknown.body).toEqual({ object: 'list', data: [], hasMore: false });
    });
  });

  describe('OpenAPI', () => {
    it('documents the three routes, the Idempotency-Key header and the body schema', async () => {
      const response = await t.http.get('/docs/openapi.json');
      expect(response.status).toBe(200);
      const document = response.body as {
        paths: Record<string, Record<string, { parameters?: unknown[]; responses: Record<string, unknown> }>>;
        components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
      };

      const create = document.paths['/v1/settlements/create']?.post;
      expect(create.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
        ]),
      );
      expect(Object.keys(create.responses)).toEqual(
        expect.arrayContaining(['201', '400', '404', '409', '422']),
      );
      expect(create.responses['409']).toMatchObject({
        description: expect.stringContaining('payout_already_settled'),
      });
      expect(create.responses['422']).toMatchObject({
        description: expect.stringContaining('allocation_exceeds_outstanding'),
      });
      expect(document.paths['/v1/settlements/{id}']?.get).toBeDefined();
      expect(document.paths['/v1/settlements']?.get).toBeDefined();
      const schema = document.components.schemas.RecordSettlementDto;
      expect([...(schema.required ?? [])].sort()).toEqual(['allocations', 'currency', 'paidAt', 'payoutId']);
      expect(schema.properties.paidAt).toMatchObject({ type: 'string', format: 'date-time' });
      expect(schema.properties.feeAmount).toMatchObject({ default: 0, minimum: 0 });
    });
  });
});
